import { Initial1763683200000 } from './1763683200000-Initial';

/** Every migration, in order. New ones are appended here. */
export const MIGRATIONS = [Initial1763683200000];

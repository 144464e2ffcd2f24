import { Initial1763683200000 } from './1763683200000-Initial';
import { DeliveryLease1763740800000 } from './1763740800000-DeliveryLease';
import { LeanDeliveryIndexes1763827200000 } from './1763827200000-LeanDeliveryIndexes';
import { OutboxCheckpoint1763913600000 } from './1763913600000-OutboxCheckpoint';
import { Messages1764000000000 } from './1764000000000-Messages';
import { SessionLastReason1764100000000 } from './1764100000000-SessionLastReason';

/** Every migration, in order. New ones are appended here. */
export const MIGRATIONS = [Initial1763683200000, DeliveryLease1763740800000, LeanDeliveryIndexes1763827200000, OutboxCheckpoint1763913600000, Messages1764000000000, SessionLastReason1764100000000];

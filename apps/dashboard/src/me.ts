import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me } from './api';

/**
 * Who is signed in (`GET /auth/me`), for screens that offer only what the caller may do: a button whose call would
 * be 403 is not shown. The API still decides; this only spares the user a refusal.
 */
export const MeContext = createContext<Me | null>(null);

export function useMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside a signed-in screen');
  return me;
}

/** Whether the caller holds `permission` (its capabilities are the expanded list: a `*` key holds each one). */
export function useCan(): (permission: string) => boolean {
  const me = useMe();
  return (permission) => me.capabilities.includes(permission);
}

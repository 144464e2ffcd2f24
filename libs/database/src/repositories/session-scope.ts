import type { OwnedSession } from './sessions.repository';

declare const service: unique symbol;

/**
 * A session a service process acts on without asking the API's organization check: made only by `serviceSession`
 * (the brand is a symbol no other module can name, so an object literal cannot pass for one).
 */
export type ServiceSession = { readonly id: string; readonly [service]: true };

/** A service session that names its organization too, for methods whose SQL writes or checks `organization_id`. */
export type ServiceSessionWithOrganization = ServiceSession & { readonly organizationId: string };

/**
 * What a repository method the API shares with the gateway or the dispatcher acts on: the API's `OwnedSession`, or a
 * service's `ServiceSession`, never a bare id (docs/decisions.md, "Tenant scope in the types").
 */
export type SessionScope = OwnedSession | ServiceSession;

/** A `SessionScope` whose organization the method reads as well. */
export type SessionScopeWithOrganization = OwnedSession | ServiceSessionWithOrganization;

/**
 * The session a service may act on by id. Who may call it: the gateway, for the sessions it holds a lease on, and the
 * dispatcher, for the session a delivery it drains names (rows the API checked when it accepted them); both at their
 * adapters' boundary, where a port's plain id meets a shared repository method. Never the API (an ESLint rule refuses
 * the import under `apps/api`): a request's session id is checked by `SessionsRepository.findInOrganization`.
 */
export function serviceSession(id: string): ServiceSession;
export function serviceSession(id: string, organizationId: string): ServiceSessionWithOrganization;
export function serviceSession(id: string, organizationId?: string): ServiceSession {
  return (organizationId === undefined ? { id } : { id, organizationId }) as ServiceSession;
}

import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { ApiConfig } from '@app/config';
import { API_KEY_PREFIX, DomainError, ERROR_STATUS, EventEnvelope, Permission, PrincipalChange } from '@app/contracts';
import { clientAddress } from '@app/net-guard';
import { requestToken } from '../auth/access-token';
import { AuthService, isExpiredPrincipal } from '../auth/auth.service';
import { reachesSession, type Principal } from '../common/principal';
import { PrincipalFeed } from '../auth/principal-feed';
import { EventStreamReader } from './event-stream.reader';

export const REALTIME_PATH = '/api/v1/ws';

/** Close code of a socket whose credentials were revoked, whose user was deleted, or who may no longer read. */
export const CLOSE_CREDENTIALS_REVOKED = 4401;

/** Events that carry what pairs a session to a phone: only for those who may change sessions. */
const EVENT_PERMISSION: Partial<Record<string, Permission>> = { 'auth.qr': 'sessions:write' };

interface Subscription {
  principal: Principal;
  sessionId: string | null;
  events: Set<string> | null;
  /** a login JWT's token version: a password change moves the user's on, and the socket closes */
  tokenVersion: number | null;
  /** closes the socket when its key expires */
  expiry: NodeJS.Timeout | null;
}

/** setTimeout's longest delay; a later expiry is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `GET /api/v1/ws` (CONTRACT 6): token in the Authorization or X-Api-Key header or `?token=`, optional `?sessionId=` and
 * `?events=a,b`. Pushes the caller organization's event envelopes, the same JSON the webhooks receive.
 * Needs `sessions:read`. A refused upgrade is answered with the usual error envelope and status.
 * A principal's change (PrincipalFeed) is applied to its open sockets at once: revoked or deleted → closed with
 * 4401; a narrower role → the socket stays and stops receiving what the role may not see.
 */
@Injectable()
export class RealtimeGateway implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RealtimeGateway.name);
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private readonly clients = new Map<WebSocket, Subscription>();
  private unsubscribe: (() => void) | null = null;
  private unlisten: (() => void) | null = null;
  private server: Server | null = null;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: AuthService,
    private readonly stream: EventStreamReader,
    private readonly principals: PrincipalFeed,
    private readonly config: ApiConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
    this.unlisten = this.principals.listen({
      changed: (change) => void this.recheck((p) => p.kind === change.kind && p.id === change.id, change),
      interrupted: () => undefined,
      // announcements may have been lost: every socket's principal is read again
      missed: () => void this.recheck(() => true, null),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.unlisten?.();
    this.server?.off('upgrade', this.onUpgrade);
    this.unsubscribe?.();
    for (const ws of this.clients.keys()) ws.close(1001, 'server shutting down');
    this.wss.close();
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== REALTIME_PATH) return; // another upgrade handler may own it
    try {
      const token = requestToken(req.headers) ?? url.searchParams.get('token');
      if (!token) throw new DomainError('unauthorized', 'missing or invalid credentials');
      const principal = await this.auth.authenticate(token);
      if (!principal.permissions.has('sessions:read')) throw new DomainError('forbidden', 'the caller lacks the needed capability', { required: ['sessions:read'] });
      const ip = clientAddress(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], this.config.trustedProxies);
      if (principal.allowedIps && !principal.allowedIps.contains(ip)) {
        throw new DomainError('forbidden', 'this API key may not be used from this address', { reason: 'ip_not_allowed' });
      }
      const sessionId = url.searchParams.get('sessionId');
      if (sessionId !== null && !reachesSession(principal, sessionId)) throw new DomainError('not_found', 'session not found', { id: sessionId });
      const events = url.searchParams.get('events');
      const sub: Subscription = {
        principal,
        sessionId,
        events: events ? new Set(events.split(',').map((e) => e.trim()).filter(Boolean)) : null,
        tokenVersion: token.startsWith(API_KEY_PREFIX) ? null : this.auth.tokenVersionOf(token),
        expiry: null,
      };
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, sub));
    } catch (err) {
      const error = err instanceof DomainError ? err : new DomainError('internal', 'internal error');
      const body = JSON.stringify(error.toBody());
      socket.end(
        `HTTP/1.1 ${ERROR_STATUS[error.code]} ${error.code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
  }

  private accept(ws: WebSocket, sub: Subscription): void {
    this.clients.set(ws, sub);
    this.armExpiry(ws, sub);
    this.unsubscribe ??= this.stream.subscribe((e, text) => this.push(e, text));
    ws.on('close', () => {
      if (sub.expiry) clearTimeout(sub.expiry);
      this.clients.delete(ws);
      if (this.clients.size === 0) {
        this.unsubscribe?.();
        this.unsubscribe = null;
      }
    });
    ws.on('error', (err) => this.logger.debug(`websocket error: ${err.message}`));
    ws.send(JSON.stringify({ type: 'ready', organizationId: sub.principal.organizationId }));
  }

  /** Reads the matching sockets' principals again from PostgreSQL; closes or narrows them. */
  private async recheck(matches: (p: Principal) => boolean, change: PrincipalChange | null): Promise<void> {
    const affected = [...this.clients].filter(([, sub]) => matches(sub.principal));
    const fresh = new Map<string, Promise<Principal | null>>();
    for (const [ws, sub] of affected) {
      const id = `${sub.principal.kind}:${sub.principal.id}`;
      if (!fresh.has(id)) fresh.set(id, this.auth.reload(sub.principal));
      let principal: Principal | null;
      try {
        principal = await fresh.get(id)!;
      } catch (err) {
        // cannot tell: refuse rather than keep streaming to someone who may have lost the right
        this.logger.warn(`re-reading ${id} failed (${(err as Error).message}): closing its socket`);
        principal = null;
      }
      const stale = sub.tokenVersion !== null && principal !== null && principal.tokenVersion !== sub.tokenVersion;
      const subscribedElsewhere = principal !== null && sub.sessionId !== null && !reachesSession(principal, sub.sessionId);
      if (!principal || stale || subscribedElsewhere || !principal.permissions.has('sessions:read')) this.revoke(ws, sub);
      else {
        sub.principal = principal;
        this.armExpiry(ws, sub);
      }
    }
    if (change && affected.length) this.logger.log(`applied a change of ${change.kind} ${change.id} to ${affected.length} socket(s)`);
  }

  private revoke(ws: WebSocket, sub: Subscription): void {
    if (sub.expiry) clearTimeout(sub.expiry);
    ws.close(CLOSE_CREDENTIALS_REVOKED, 'credentials revoked');
    this.clients.delete(ws);
  }

  /** A key with an expiry: its socket closes (4401) when it expires, as its next request would be refused. */
  private armExpiry(ws: WebSocket, sub: Subscription): void {
    if (sub.expiry) clearTimeout(sub.expiry);
    sub.expiry = null;
    const at = sub.principal.expiresAt;
    if (at === null) return;
    const fire = () => {
      if (isExpiredPrincipal(sub.principal)) this.revoke(ws, sub);
      else sub.expiry = setTimeout(fire, Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now())));
    };
    sub.expiry = setTimeout(fire, Math.min(MAX_TIMER_MS, Math.max(0, at - Date.now())));
    sub.expiry.unref();
  }

  private push(envelope: EventEnvelope, text: string): void {
    const needed = EVENT_PERMISSION[envelope.event];
    for (const [ws, sub] of this.clients) {
      if (envelope.organizationId !== sub.principal.organizationId) continue;
      // a session-scoped key hears its sessions only (organization-wide events carry no session: not for it)
      if (!reachesSession(sub.principal, envelope.sessionId ?? null)) continue;
      if (needed && !sub.principal.permissions.has(needed)) continue;
      if (sub.sessionId && envelope.sessionId !== sub.sessionId) continue;
      if (sub.events && !sub.events.has('*') && !sub.events.has(envelope.event)) continue;
      if (ws.readyState === WebSocket.OPEN) ws.send(text);
    }
  }
}

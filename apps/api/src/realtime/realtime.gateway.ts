import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { DomainError, ERROR_STATUS, EventEnvelope } from '@app/contracts';
import { bearerToken } from '../auth/access-token';
import { AuthService } from '../auth/auth.service';
import type { Principal } from '../auth/principal';
import { EventStreamReader } from './event-stream.reader';

export const REALTIME_PATH = '/api/v1/ws';

interface Subscription {
  principal: Principal;
  sessionId: string | null;
  events: Set<string> | null;
}

/**
 * `GET /api/v1/ws` (CONTRACT 6): token in the Authorization header or `?token=`, optional `?sessionId=` and
 * `?events=a,b`. Pushes the caller organization's event envelopes, the same JSON the webhooks receive.
 * Needs `sessions:read`. A refused upgrade is answered with the usual error envelope and status.
 */
@Injectable()
export class RealtimeGateway implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RealtimeGateway.name);
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  private readonly clients = new Map<WebSocket, Subscription>();
  private unsubscribe: (() => void) | null = null;
  private server: Server | null = null;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: AuthService,
    private readonly stream: EventStreamReader,
  ) {}

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
  }

  async onApplicationShutdown(): Promise<void> {
    this.server?.off('upgrade', this.onUpgrade);
    this.unsubscribe?.();
    for (const ws of this.clients.keys()) ws.close(1001, 'server shutting down');
    this.wss.close();
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== REALTIME_PATH) return; // another upgrade handler may own it
    try {
      const token = bearerToken(req.headers.authorization) ?? url.searchParams.get('token');
      if (!token) throw new DomainError('unauthorized', 'missing or invalid credentials');
      const principal = await this.auth.authenticate(token);
      if (!principal.permissions.has('sessions:read')) throw new DomainError('forbidden', 'the caller lacks the needed capability', { required: ['sessions:read'] });
      const events = url.searchParams.get('events');
      const sub: Subscription = {
        principal,
        sessionId: url.searchParams.get('sessionId'),
        events: events ? new Set(events.split(',').map((e) => e.trim()).filter(Boolean)) : null,
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
    this.unsubscribe ??= this.stream.subscribe((e, text) => this.push(e, text));
    ws.on('close', () => {
      this.clients.delete(ws);
      if (this.clients.size === 0) {
        this.unsubscribe?.();
        this.unsubscribe = null;
      }
    });
    ws.on('error', (err) => this.logger.debug(`websocket error: ${err.message}`));
    ws.send(JSON.stringify({ type: 'ready', organizationId: sub.principal.organizationId }));
  }

  private push(envelope: EventEnvelope, text: string): void {
    for (const [ws, sub] of this.clients) {
      if (envelope.organizationId !== sub.principal.organizationId) continue;
      if (sub.sessionId && envelope.sessionId !== sub.sessionId) continue;
      if (sub.events && !sub.events.has('*') && !sub.events.has(envelope.event)) continue;
      if (ws.readyState === WebSocket.OPEN) ws.send(text);
    }
  }
}

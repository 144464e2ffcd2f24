import {
  DomainError,
  SIM_CLOSE_CODES,
  SIM_DEVICE_PATH,
  SIM_MEDIA_PATH,
  SIM_WA_WEB_PATH,
  SIM_WA_WEB_DEVICES_PATH,
  SIM_WA_WEB_TRUST_PATH,
  SimDeviceFrame,
  SimNetworkFrame,
} from '@app/contracts';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import { keepSocketAlive } from './keepalive';
import { applyFault } from './sim-faults';
import { phoneChatChange, type SimChatState } from './actions/chats';
import { DeviceLink, SimNetwork } from './sim-network';
import { WhatsAppWebFrontDoor } from './whatsapp-web/front-door';

export interface NetworkSimOptions {
  port: number;
  host?: string;
  /** QR rotation period; default 20 s like WhatsApp */
  qrIntervalMs?: number;
  /**
   * Pings every device socket, on both doors, this often and drops one that sent nothing since the previous ping, as
   * WhatsApp's servers drop an unresponsive client (a paused or partitioned gateway; keepalive.ts). Off when unset.
   */
  keepaliveMs?: number;
  /** how long a device may edit a message after sending it; default WhatsApp's 15 minutes */
  editWindowMs?: number;
  /** benchmarks only: serve `POST /sim/whatsapp-web/devices` (SIM_TEST_PRELINK; prelink.ts) */
  prelink?: boolean;
  logger?: Logger;
}

export interface RunningNetworkSim {
  port: number;
  /** `http://127.0.0.1:<port>`: what NETWORK_SIM_URL points at */
  url: string;
  network: SimNetwork;
  close(): Promise<void>;
}

const SESSION_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Inbound media comes as base64 in the body: 16 MiB of bytes and then some. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const MEDIA_CHUNK_BYTES = 64 * 1024;
/** A device that connects but never says hello is holding a socket for nothing. */
const HELLO_TIMEOUT_MS = 10000;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Media goes out in chunks, as a CDN streams it, so readers are exercised as streams. */
function sendMedia(res: ServerResponse, media: { data: Buffer; mimetype: string; filename: string | null }): void {
  const headers: Record<string, string | number> = { 'content-type': media.mimetype, 'content-length': media.data.length };
  if (media.filename) headers['content-disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(media.filename)}`;
  res.writeHead(200, headers);
  const chunks = function* () {
    for (let i = 0; i < media.data.length; i += MEDIA_CHUNK_BYTES) yield media.data.subarray(i, i + MEDIA_CHUNK_BYTES);
  };
  Readable.from(chunks()).pipe(res);
}

function sendError(res: ServerResponse, err: unknown): void {
  const error = err instanceof DomainError ? err : new DomainError('internal', 'internal error');
  sendJson(res, error.status, error.toBody());
}

async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new DomainError('payload_too_large', 'body too large', { limit: MAX_BODY_BYTES });
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (raw.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new DomainError('validation_error', 'body is not valid JSON', {});
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new DomainError('validation_error', 'body must be a JSON object', {});
  }
  return body as Record<string, unknown>;
}

type ControlBody = Record<string, unknown>;

/**
 * `GET /sim/sessions/{id}/account`: what the device set on the network (CONTRACT 13's table): its profile and block
 * list (actions/contacts.ts), its chats' state (actions/chats.ts) with each chat's business labels (actions/account-extras.ts).
 */
function accountView(network: SimNetwork, sessionId: string) {
  const device = network.view(sessionId);
  const chats: Record<string, SimChatState & { labels: string[] }> = {};
  for (const [jid, state] of Object.entries(network.world.chats.account(sessionId))) {
    chats[jid] = { ...state, labels: device.jid ? network.world.accountExtras.labelsOfChat(device.jid, jid) : [] };
  }
  return { ...network.world.contacts.accountView(device.phoneNumber), chats };
}

/** `POST /sim/sessions/{id}/<action>`: what the phone and the account's contacts do. */
const SESSION_ACTIONS: Record<string, (network: SimNetwork, sessionId: string, body: ControlBody) => unknown> = {
  scan: (n, id, body) => n.scan(id, body),
  'pair-code': (n, id, body) => n.enterPairingCode(id, body),
  inbound: (n, id, body) => n.inbound(id, body),
  receipt: (n, id, body) => n.receipt(id, body),
  reaction: (n, id, body) => n.reaction(id, body),
  'poll-vote': (n, id, body) => n.pollVote(id, body),
  presence: (n, id, body) => n.presence(id, body),
  call: (n, id, body) => n.call(id, body),
  edit: (n, id, body) => n.contactEdit(id, body),
  revoke: (n, id, body) => n.contactRevoke(id, body),
  drop: (n, id) => n.drop(id),
  unlink: (n, id) => n.unlink(id),
  fault: (n, id, body) => applyFault(n, id, body),
  chat: (n, id, body) => phoneChatChange(n, id, body),
  // CONTRACT 13: a contact posts a status; the phone edits its business labels
  status: (n, id, body) => n.world.accountExtras.contactStatus(n, id, body),
  labels: (n, id, body) => n.world.accountExtras.editLabel(n, id, body),
};

/** The control API of CONTRACT 9: what the phone, contacts and test observers do to the network. */
async function handleControl(network: SimNetwork, waWeb: WhatsAppWebFrontDoor, prelink: boolean, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  const method = req.method ?? 'GET';
  const path = url.pathname;
  const sessionFilter = url.searchParams.get('sessionId') ?? undefined;

  if (method === 'GET' && path === '/healthz') return sendJson(res, 200, { status: 'ok' });
  if (method === 'GET' && path === '/sim/groups') return sendJson(res, 200, { data: network.listGroups(sessionFilter) });
  if (method === 'GET' && path === '/sim/messages') return sendJson(res, 200, { data: network.listMessages(sessionFilter) });
  if (method === 'GET' && path === '/sim/calls') return sendJson(res, 200, { data: network.world.messages.listCalls(sessionFilter) });
  if (method === 'GET' && path === SIM_WA_WEB_TRUST_PATH) return sendJson(res, 200, await waWeb.trust());
  if (method === 'POST' && path === SIM_WA_WEB_DEVICES_PATH) {
    if (!prelink) throw new DomainError('forbidden', 'linking a device without its screen is for benchmarks: start the simulator with SIM_TEST_PRELINK=true', {});
    return sendJson(res, 200, waWeb.prelink(await readJsonObject(req)));
  }

  // accounts and profiles (docs/network-sim.md, "Contacts, profile and presence")
  if (method === 'POST' && path === '/sim/contacts') return sendJson(res, 200, network.world.contacts.put(network, await readJsonObject(req)));
  const picture = /^\/sim\/pictures\/([0-9a-f]{64})$/.exec(path);
  if (method === 'GET' && picture) return sendMedia(res, network.world.contacts.picture(picture[1]));
  const extras = await handleAccountExtrasControl(network, method, path, sessionFilter, req);
  if (extras !== undefined) return sendJson(res, 200, extras);

  const media = new RegExp(`^${SIM_MEDIA_PATH}/([^/]+)$`).exec(path);
  if (method === 'GET' && media) return sendMedia(res, network.mediaBytes(decodeURIComponent(media[1])));

  const group = /^\/sim\/groups\/([^/]+)(\/participants)?$/.exec(path);
  if (group) {
    const groupJid = decodeURIComponent(group[1]);
    if (method === 'POST' && group[2]) return sendJson(res, 200, network.groupParticipants(groupJid, await readJsonObject(req)));
    if (method === 'PATCH' && !group[2]) return sendJson(res, 200, network.patchGroup(groupJid, await readJsonObject(req)));
    // the group as the network holds it: admins, invite code, picture, and how often devices read its metadata
    if (method === 'GET' && !group[2]) return sendJson(res, 200, network.world.groupAdmin.state(network.group(groupJid)));
  }

  const match = /^\/sim\/sessions\/([^/]+)(?:\/([a-z-]+))?$/.exec(path);
  if (match) {
    const sessionId = decodeURIComponent(match[1]);
    const action = match[2];
    if (method === 'GET' && !action) return sendJson(res, 200, network.view(sessionId));
    if (method === 'GET' && action === 'presence-log') return sendJson(res, 200, { data: network.presenceLog(sessionId) });
    if (method === 'GET' && action === 'account') return sendJson(res, 200, accountView(network, sessionId));
    // a WhatsApp Web device's phone needs what its screen shows (docs/network-sim.md, WhatsApp Web front door)
    const waWebAction = method === 'POST' && action ? waWeb.sessionAction(sessionId, action) : undefined;
    if (waWebAction) return sendJson(res, 200, await waWebAction(await readJsonObject(req)));
    const handle = action && Object.hasOwn(SESSION_ACTIONS, action) ? SESSION_ACTIONS[action] : undefined;
    if (method === 'POST' && handle) return sendJson(res, 200, handle(network, sessionId, await readJsonObject(req)));
  }
  throw new DomainError('not_found', 'no such route', { method, path });
}

/**
 * CONTRACT 13's observers and actors beside the sessions' own calls: channels (created, posted to, listed), the
 * statuses devices posted, and a device's labels as the network keeps them. undefined: not one of these routes.
 */
async function handleAccountExtrasControl(network: SimNetwork, method: string, path: string, sessionFilter: string | undefined, req: IncomingMessage): Promise<unknown> {
  const extras = network.world.accountExtras;
  if (path === '/sim/channels' && method === 'POST') return extras.createChannel(await readJsonObject(req));
  if (path === '/sim/channels' && method === 'GET') return { data: extras.listChannels() };
  const posts = /^\/sim\/channels\/([^/]+)\/posts$/.exec(path);
  if (posts && method === 'POST') return extras.post(network, decodeURIComponent(posts[1]), await readJsonObject(req));
  if (path === '/sim/statuses' && method === 'GET') return { data: extras.listStatuses(sessionFilter) };
  const labels = /^\/sim\/sessions\/([^/]+)\/labels$/.exec(path);
  if (labels && method === 'GET') return extras.view(network.accountOf(decodeURIComponent(labels[1])).jid);
  return undefined;
}

/** One device connection: JSON frames over a WebSocket, mapped onto SimNetwork calls. */
function serveDevice(network: SimNetwork, ws: WebSocket, sessionId: string, logger?: Logger, keepaliveMs?: number): void {
  /** the `silent` fault: the network neither reads nor writes nor answers pings on this socket any more */
  let silent = false;
  const link: DeviceLink = {
    send: (frame: SimNetworkFrame) => {
      if (ws.readyState === WebSocket.OPEN && !silent) ws.send(JSON.stringify(frame));
    },
    close: (code, reason) => ws.close(code, reason),
    drop: () => ws.terminate(),
    silence: () => void (silent = true),
  };
  // pongs are ours to send (the server runs with autoPong off), so a silenced socket stops answering them
  ws.on('ping', (data) => {
    if (!silent) ws.pong(data);
  });
  let greeted = false;
  const helloTimer = setTimeout(() => ws.close(SIM_CLOSE_CODES.protocolError, 'no hello'), HELLO_TIMEOUT_MS);

  ws.on('message', (data, isBinary) => {
    if (silent) return;
    let frame: SimDeviceFrame;
    try {
      if (isBinary) throw new Error('binary frame');
      frame = JSON.parse(data.toString()) as SimDeviceFrame;
    } catch {
      ws.close(SIM_CLOSE_CODES.protocolError, 'frames are JSON text');
      return;
    }
    if (frame.type === 'hello') {
      if (greeted) return void ws.close(SIM_CLOSE_CODES.protocolError, 'hello twice');
      greeted = true;
      clearTimeout(helloTimer);
      network.attach(sessionId, link, frame.credential);
      return;
    }
    if (!greeted) return void ws.close(SIM_CLOSE_CODES.protocolError, 'hello first');
    if (frame.type === 'ack') return network.ack(sessionId, link, frame.eventId);
    if (frame.type === 'request') {
      try {
        const result = network.request(sessionId, link, frame.op, frame.args);
        link.send({ type: 'response', id: frame.id, ok: true, result });
      } catch (err) {
        const error = err instanceof DomainError ? err : new DomainError('internal', 'internal error');
        if (!(err instanceof DomainError)) logger?.error({ err, op: frame.op }, 'device request failed');
        link.send({ type: 'response', id: frame.id, ok: false, error: { code: error.code, message: error.message, details: error.details } });
      }
      return;
    }
    ws.close(SIM_CLOSE_CODES.protocolError, 'unknown frame type');
  });
  keepSocketAlive(ws, keepaliveMs, () => silent);
  ws.on('close', () => {
    clearTimeout(helloTimer);
    network.detach(sessionId, link);
  });
  ws.on('error', (err) => logger?.debug({ err, sessionId }, 'device socket error'));
}

/**
 * Starts the network simulator: the control API (HTTP) and the device endpoint (WebSocket) on one port.
 * Shared by main.ts and by tests, which start it in-process on port 0.
 */
export async function startNetworkSim(options: NetworkSimOptions): Promise<RunningNetworkSim> {
  const logger = options.logger;
  const network = new SimNetwork({ qrIntervalMs: options.qrIntervalMs ?? 20000 });
  if (options.editWindowMs !== undefined) network.world.messages.editWindowMs = options.editWindowMs;
  const wss = new WebSocketServer({ noServer: true, autoPong: false });
  const waWeb = new WhatsAppWebFrontDoor(network, logger, { keepaliveMs: options.keepaliveMs });

  const server = createServer((req, res) => {
    handleControl(network, waWeb, options.prelink === true, req, res).catch((err) => {
      if (!(err instanceof DomainError)) logger?.error({ err }, 'control request failed');
      if (!res.headersSent) sendError(res, err);
    });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    const sessionId = url.searchParams.get('sessionId') ?? '';
    if (url.pathname === SIM_WA_WEB_PATH && SESSION_ID_PATTERN.test(sessionId)) return waWeb.handleUpgrade(req, socket, head, sessionId);
    if (url.pathname !== SIM_DEVICE_PATH || !SESSION_ID_PATTERN.test(sessionId)) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveDevice(network, ws, sessionId, logger, options.keepaliveMs));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger?.info({ port }, 'network simulator listening');
  network.world.contacts.pictureBase = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | null = null;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    network,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        network.closeAll();
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        waWeb.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

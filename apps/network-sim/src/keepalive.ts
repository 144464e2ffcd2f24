import type { WebSocket } from 'ws';

/**
 * The network's keepalive on a device socket, the same on both doors (`SIM_KEEPALIVE_MS`): a WebSocket ping every
 * `everyMs`, and a socket that sent nothing since the previous ping (no pong, no frame) is ended, as WhatsApp's servers
 * drop a client that has gone silent (a frozen, hung or cut-off gateway). A healthy client answers pings in its
 * WebSocket layer (Baileys' `ws` and the `sim` engine alike), whatever its own keep-alive period. A socket under the
 * `silent` fault (`isSilent`) is neither pinged nor ended: the network has stopped talking to it, and the client must
 * notice. Off when `everyMs` is unset or 0.
 */
export function keepSocketAlive(ws: WebSocket, everyMs: number | undefined, isSilent: () => boolean): void {
  if (!everyMs) return;
  let heard = true;
  const hear = () => void (heard = true);
  ws.on('pong', hear);
  ws.on('message', hear);
  const timer = setInterval(() => {
    if (isSilent()) return;
    if (!heard) return void ws.terminate();
    heard = false;
    ws.ping();
  }, everyMs);
  timer.unref();
  ws.on('close', () => clearInterval(timer));
}

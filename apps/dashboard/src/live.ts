import { API_BASE, credentials, type EventEnvelope } from './api';

export type LiveState = 'connecting' | 'open' | 'closed';
type Listener = (event: EventEnvelope) => void;

/**
 * One WebSocket to /api/v1/ws for the whole app; every screen subscribes to it. Browsers cannot set headers on a
 * WebSocket, so the token rides in `?token=`. The socket is live-only: on a reconnect, screens reload their lists
 * (`onReconnect`) to catch what they missed.
 */
class LiveFeed {
  private socket: WebSocket | null = null;
  private listeners = new Set<Listener>();
  private stateListeners = new Set<(s: LiveState) => void>();
  private reconnectListeners = new Set<() => void>();
  private retry: ReturnType<typeof setTimeout> | undefined;
  private wanting = false;
  private everOpened = false;
  state: LiveState = 'closed';

  start(): void {
    this.wanting = true;
    if (!this.socket) this.connect();
  }

  stop(): void {
    this.wanting = false;
    clearTimeout(this.retry);
    this.socket?.close();
    this.socket = null;
    this.everOpened = false;
    this.setState('closed');
  }

  /** false after sign-out: nothing should be kept for the next user of the tab */
  wanted(): boolean {
    return this.wanting;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onState(listener: (s: LiveState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  private connect(): void {
    const token = credentials.get();
    if (!token) return;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}${API_BASE}/ws?token=${encodeURIComponent(token)}`);
    this.socket = socket;
    this.setState('connecting');
    socket.onmessage = (msg) => {
      const frame = JSON.parse(String(msg.data));
      if (frame.type === 'ready') {
        this.setState('open');
        if (this.everOpened) this.reconnectListeners.forEach((l) => l());
        this.everOpened = true;
        return;
      }
      this.listeners.forEach((l) => l(frame as EventEnvelope));
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.setState('closed');
      if (this.wanting) this.retry = setTimeout(() => this.connect(), 2000);
    };
  }

  private setState(state: LiveState): void {
    this.state = state;
    this.stateListeners.forEach((l) => l(state));
  }
}

export const live = new LiveFeed();

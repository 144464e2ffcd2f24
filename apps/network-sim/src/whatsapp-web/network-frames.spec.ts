import type { SimNetworkFrame } from '@app/contracts';
import { FrameDoor, playFrame } from './network-frames';
import type { WaSocket } from './wa-socket';

describe('playFrame (the network frame → stanza table)', () => {
  const door = () => {
    const logged: Array<{ level: string; msg: string; type: unknown }> = [];
    const log = (level: string) => (obj: { type?: unknown }, msg: string) => logged.push({ level, msg, type: obj.type });
    const showRefs = jest.fn();
    const socket = {
      sessionId: 's1',
      deps: { logger: { debug: log('debug'), warn: log('warn'), info: log('info') } },
      pairing: { showRefs },
    } as unknown as WaSocket;
    const frames: FrameDoor = { socket, history: { chunks: 0, chats: new Map() } };
    return { frames, logged, showRefs };
  };

  it('logs a frame of a type the door does not know, at warn, and sends nothing', () => {
    const { frames, logged } = door();
    playFrame(frames, { type: 'teleport', eventId: 'e1' } as unknown as SimNetworkFrame);
    expect(logged).toEqual([{ level: 'warn', msg: 'network frame of a type the whatsapp web front door does not know', type: 'teleport' }]);
  });

  it('logs an event the door does not carry yet (it stays pending on the network)', () => {
    const { frames, logged } = door();
    playFrame(frames, { type: 'channel-message', eventId: 'e1' } as unknown as SimNetworkFrame);
    expect(logged).toEqual([{ level: 'debug', msg: 'network event not carried by the whatsapp web front door yet', type: 'channel-message' }]);
  });

  it('plays a known frame through its entry: a QR shows the pair-device refs', () => {
    const { frames, logged, showRefs } = door();
    playFrame(frames, { type: 'qr', qr: 'q', expiresAt: 0 });
    expect(showRefs).toHaveBeenCalledTimes(1);
    expect(logged).toEqual([]);
  });
});

import pino from 'pino';
import { ClientVersionAlarm } from './client-version-alarm';

describe('ClientVersionAlarm', () => {
  it('says once per process what the operator must do, and counts every refusal', () => {
    const lines: Array<Record<string, unknown>> = [];
    let counted = 0;
    const alarm = new ClientVersionAlarm(pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) }), () => void (counted += 1));
    alarm.refused('ses_1');
    alarm.refused('ses_2');
    alarm.refused('ses_1');
    expect(counted).toBe(3);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, sessionId: 'ses_1', reason: 'client_version_refused' });
    expect(String(lines[0].msg)).toContain('WHATSAPP_WEB_VERSION');
    expect(String(lines[0].msg)).toContain('WHATSAPP_WEB_VERSION_FETCH=true');
  });
});

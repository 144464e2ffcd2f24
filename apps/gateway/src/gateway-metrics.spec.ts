import { MetricsRegistry } from '@app/infra';
import { GatewayMetrics } from './gateway-metrics';

describe('GatewayMetrics: the inbound spool', () => {
  it('counts what the spool reports and reads its size at scrape time, once per scrape', async () => {
    const shared = new MetricsRegistry();
    const metrics = new GatewayMetrics(shared);
    let measures = 0;
    metrics.watchSpool({
      measure: async () => {
        measures += 1;
        return { sessions: 2, entries: 7, bytes: 4096 };
      },
      memoryStats: () => ({ entries: 3, bytes: 900 }),
    });
    const reported = metrics.spoolMetrics();
    reported.appended('redis', 500);
    reported.appended('redis', 300);
    reported.appended('memory', 200);
    reported.removed('redis');
    reported.replayed(4);
    reported.overflowed('redis');

    const text = await shared.registry.metrics();
    const line = (name: string) => text.split('\n').find((l) => l.startsWith(name))?.split(' ').pop();
    expect(line('gw_inbound_spool_appends_total{medium="redis"}')).toBe('2');
    expect(line('gw_inbound_spool_appends_total{medium="memory"}')).toBe('1');
    expect(line('gw_inbound_spool_appended_bytes_total{medium="redis"}')).toBe('800');
    expect(line('gw_inbound_spool_removes_total{medium="redis"}')).toBe('1');
    expect(line('gw_inbound_spool_replays_total')).toBe('4');
    expect(line('gw_inbound_spool_overflows_total{medium="redis"}')).toBe('1');
    expect(line('gw_inbound_spool_entries')).toBe('7');
    expect(line('gw_inbound_spool_bytes')).toBe('4096');
    expect(line('gw_inbound_spool_sessions')).toBe('2');
    expect(line('gw_inbound_spool_memory_entries')).toBe('3');
    expect(measures).toBe(1);
  });
});

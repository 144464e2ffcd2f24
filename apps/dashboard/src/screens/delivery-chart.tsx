import type { DeliveryView } from '../api';
import { plural } from '../ui';

export interface ChartBucket {
  start: number;
  delivered: number;
  failed: number;
  inFlight: number;
}

const BUCKETS = 12;

/**
 * The delivery log folded into equal time buckets from its oldest row to `now`: how many deliveries each bucket
 * started (the rate) and how they ended. "failed" is `dead`, or `pending` after a failed attempt (a retry is due).
 */
export function bucketDeliveries(deliveries: DeliveryView[], now: number): { buckets: ChartBucket[]; widthMs: number } {
  const oldest = Math.min(now, ...deliveries.map((d) => d.createdAt));
  const widthMs = Math.max(60_000, Math.ceil((now - oldest + 1) / BUCKETS));
  const first = now - widthMs * BUCKETS;
  const buckets = Array.from({ length: BUCKETS }, (_, i) => ({ start: first + i * widthMs, delivered: 0, failed: 0, inFlight: 0 }));
  for (const d of deliveries) {
    const bucket = buckets[Math.min(BUCKETS - 1, Math.max(0, Math.floor((d.createdAt - first) / widthMs)))];
    if (d.status === 'delivered') bucket.delivered++;
    else if (d.status === 'dead' || (d.status === 'pending' && d.attempts > 0)) bucket.failed++;
    else bucket.inFlight++;
  }
  return { buckets, widthMs };
}

const span = (ms: number) => (ms >= 3_600_000 ? `${Math.round(ms / 3_600_000)} h` : `${Math.round(ms / 60_000)} min`);

/** A small inline SVG: one stacked bar per bucket (delivered green, failed red, in flight grey). */
export function DeliveryChart({ deliveries, now = Date.now() }: { deliveries: DeliveryView[]; now?: number }) {
  const { buckets, widthMs } = bucketDeliveries(deliveries, now);
  const max = Math.max(1, ...buckets.map((b) => b.delivered + b.failed + b.inFlight));
  const delivered = deliveries.filter((d) => d.status === 'delivered').length;
  const failed = buckets.reduce((n, b) => n + b.failed, 0);
  const settled = delivered + failed;
  const W = 360;
  const H = 90;
  const bar = W / buckets.length;
  const y = (n: number) => (n / max) * (H - 14);
  return (
    <figure class="chart" data-chart-delivered={delivered} data-chart-failed={failed}>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={`${delivered} delivered, ${failed} failed`}>
        <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} class="axis" />
        {buckets.map((b, i) => {
          const x = i * bar + 2;
          const hd = y(b.delivered);
          const hf = y(b.failed);
          const hp = y(b.inFlight);
          return (
            <g key={b.start}>
              <title>{`${new Date(b.start).toLocaleTimeString()}: ${b.delivered} delivered, ${b.failed} failed, ${b.inFlight} in flight`}</title>
              <rect x={x} width={bar - 4} y={H - hd} height={hd} class="ok" />
              <rect x={x} width={bar - 4} y={H - hd - hf} height={hf} class="bad" />
              <rect x={x} width={bar - 4} y={H - hd - hf - hp} height={hp} class="wait" />
            </g>
          );
        })}
        <text x="2" y="10" class="label">{max}</text>
      </svg>
      <figcaption>
        {plural(deliveries.length, 'delivery', 'deliveries')} in {span(widthMs * buckets.length)} ({span(widthMs)} per bar) ·{' '}
        <span class="ok-text">{delivered} delivered</span> · <span class="bad-text">{failed} failed</span>
        {settled ? ` · ${Math.round((delivered / settled) * 100)}% success` : ''}
      </figcaption>
    </figure>
  );
}

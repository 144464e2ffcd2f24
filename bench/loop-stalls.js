/*
 * A `--require` hook for a bench's child process: records its garbage collections of 2 ms or more and its event-loop
 * stalls over 10 ms (a 5 ms timer that fired late), one line each with the wall clock, appended every second to
 * `$TMPDIR/loop-stalls-<pid>.log`. E.g. the campaigns bench's API:
 *   CAMPAIGN_API_NODE_OPTIONS="--require $PWD/bench/loop-stalls.js" CAMPAIGN_SKIP_CHAOS=1 node bench/campaigns.bench.js
 */
const { constants } = require('node:perf_hooks');
const { appendFileSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');

const file = join(tmpdir(), `loop-stalls-${process.pid}.log`);
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
const lines = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.duration >= 2) lines.push(`${Date.now()} gc ${kinds[e.detail?.kind] ?? e.detail?.kind} ${e.duration.toFixed(1)}`);
}).observe({ entryTypes: ['gc'] });
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - last > 10) lines.push(`${Date.now()} stall ${(now - last - 5).toFixed(1)}`);
  last = now;
}, 5).unref();
setInterval(() => {
  if (lines.length) appendFileSync(file, lines.splice(0).map((l) => `${l}\n`).join(''));
}, 1000).unref();

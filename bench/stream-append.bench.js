// Producer/Redis CPU per event: pipelined XADD vs one script call per batch (session 4): `node bench/stream-append.bench.js`.
// Uses and deletes the key pb:s on the local Redis.
const Redis = require('ioredis');
const r = new Redis({ host: '127.0.0.1' });
const LUA = `local n = 0
for i = 2, #ARGV do redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'envelope', ARGV[i]); n = n + 1 end
return n`;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const rcpu = () => { const f = require('fs').readFileSync(`/proc/${require('child_process').execSync('pgrep -x redis-server').toString().trim().split('\n')[0]}/stat`, 'utf8').split(') ')[1].split(' '); return (+f[11] + +f[12]) / 100; };
(async () => {
  const N = 60000, B = 500;
  const texts = Array.from({ length: N }, (_, i) => JSON.stringify({ id: 'evt_01JX' + String(i).padStart(22, '0'), event: 'message.received', organizationId: 'org_1', sessionId: null, timestamp: Date.now(), payload: { text: `hello ${i}`, from: '4917600000000@s.whatsapp.net' } }));
  for (const mode of ['pipeline', 'lua', 'pipeline', 'lua']) {
    await r.del('pb:s');
    const c0 = cpu(), r0 = rcpu(), t0 = Date.now();
    for (let i = 0; i < N; i += B) {
      const chunk = texts.slice(i, i + B);
      if (mode === 'pipeline') { const p = r.pipeline(); for (const t of chunk) p.xadd('pb:s', 'MAXLEN', '~', '100000', '*', 'envelope', t); await p.exec(); }
      else await r.eval(LUA, 1, 'pb:s', '100000', ...chunk);
    }
    console.log(mode.padEnd(9), 'client', ((cpu() - c0) / N * 1e6).toFixed(1), 'µs/event; redis', ((rcpu() - r0) / N * 1e6).toFixed(1), 'µs/event; wall', Date.now() - t0, 'ms', await r.xlen('pb:s'));
  }
  await r.del('pb:s'); r.disconnect();
})();

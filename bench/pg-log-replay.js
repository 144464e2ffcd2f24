// PostgreSQL CPU per delivery for the delivery-log schema variants (session 4): `node bench/pg-log-replay.js [variant,...]`.
// Creates and drops its own databases (pgreplay_*); reads every postgres process's CPU from /proc.
const { Client } = require('pg');
const fs = require('fs'); const { execSync } = require('child_process');
const N = 30000, B = 1000;
function pgCpu() { let t = 0; for (const pid of execSync('pgrep -x postgres || pgrep postgres').toString().trim().split('\n')) { try { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); t += +f[11] + +f[12]; } catch { /* the process ended between readdir and read */ } } return t / 100; }
const arr = (xs) => '{' + xs.map((x) => x === null ? 'NULL' : '"' + String(x).replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"').join(',') + '}';
const variants = {
  current: { schema: `
    CREATE TABLE webhooks (id text PRIMARY KEY);
    CREATE TABLE events (id text PRIMARY KEY, organization_id text NOT NULL, session_id text, type text NOT NULL, envelope jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), fanned_out_at timestamptz);
    CREATE INDEX events_pending_fanout ON events (created_at) WHERE fanned_out_at IS NULL;
    CREATE TABLE deliveries (id text PRIMARY KEY, webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE, event_id text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      organization_id text NOT NULL, event_type text NOT NULL, status text NOT NULL CHECK (status IN ('pending','delivering','delivered','dead')), attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz, last_status_code integer, last_error text, created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(), delivered_at timestamptz,
      leased_until timestamptz, attempt_base integer NOT NULL DEFAULT 0, UNIQUE (webhook_id, event_id));
    CREATE INDEX deliveries_open ON deliveries (next_attempt_at) WHERE status IN ('pending','delivering');
    CREATE INDEX deliveries_webhook_log ON deliveries (webhook_id, id DESC);
    CREATE TABLE delivery_attempts (id text PRIMARY KEY, delivery_id text NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE, attempt_no integer NOT NULL, status_code integer, duration_ms integer NOT NULL, error text, response_snippet text, started_at timestamptz NOT NULL);
    CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempt_no);`,
    mark: true, attempts: 'table' },
};
variants.noEventFk = { ...variants.current, schema: variants.current.schema.replace('REFERENCES events(id) ON DELETE CASCADE', '') };
variants.noMark = { ...variants.noEventFk, mark: false, schema: variants.noEventFk.schema.replace(`fanned_out_at timestamptz);`, `fanned_out_at timestamptz, tx bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint));`).replace('CREATE INDEX events_pending_fanout ON events (created_at) WHERE fanned_out_at IS NULL;', 'CREATE INDEX events_tx ON events USING brin (tx);') };
variants.inline = { ...variants.noMark, attempts: 'inline', schema: variants.noMark.schema.replace(/CREATE TABLE delivery_attempts[\s\S]*$/, '').replace('attempt_base integer NOT NULL DEFAULT 0,', 'attempt_base integer NOT NULL DEFAULT 0, attempt_log jsonb NOT NULL DEFAULT \'[]\',') };
variants.inlineNoUnique = { ...variants.inline, schema: variants.inline.schema.replace(', UNIQUE (webhook_id, event_id))', ')') , noUnique: true };
variants.inlineJson = { ...variants.inline, schema: variants.inline.schema.replace('envelope jsonb', 'envelope json') };
async function run(name) {
  const v = variants[name]; const db = 'pgreplay_' + name.toLowerCase();
  const admin = new Client({ host: '127.0.0.1', user: 'postgres', database: 'postgres' }); await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${db}`); await admin.query(`CREATE DATABASE ${db}`); await admin.end();
  const c = new Client({ host: '127.0.0.1', user: 'postgres', database: db }); await c.connect();
  await c.query(v.schema); await c.query(`INSERT INTO webhooks VALUES ('wh_1')`);
  let outbox = 0, log = 0;
  for (let i = 0; i < N; i += B) {
    const ids = [], texts = [];
    for (let k = 0; k < B; k++) { const id = 'evt_01JX' + String(i + k).padStart(22, '0'); ids.push(id); texts.push(JSON.stringify({ id, event: 'message.received', organizationId: 'org_1', sessionId: null, timestamp: Date.now(), payload: { text: `hello ${i + k}`, from: '4917600000000@s.whatsapp.net' } })); }
    let t0 = pgCpu();
    await c.query(`INSERT INTO events (id, organization_id, session_id, type, envelope) SELECT u.id, u.organization_id, u.session_id, u.type, u.envelope::${v.schema.includes('envelope json ') ? 'json' : 'jsonb'} FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, organization_id, session_id, type, envelope) ON CONFLICT (id) DO NOTHING`,
      [arr(ids), arr(ids.map(() => 'org_1')), arr(ids.map(() => null)), arr(ids.map(() => 'message.received')), arr(texts)]);
    let t1 = pgCpu(); outbox += t1 - t0;
    const dids = ids.map((id) => 'dlv_' + id.slice(4)), now = Date.now();
    const P = [arr(dids), arr(ids.map(() => 'wh_1')), arr(ids), arr(ids.map(() => 'org_1')), arr(ids.map(() => 'message.received')), arr(ids.map(() => 'delivered')), arr(ids.map(() => null)), arr(ids.map(() => 200)), arr(ids.map(() => null)), arr(ids.map(() => now)), arr(ids.map((x) => 'att_' + x.slice(4))), arr(ids.map(() => 3)), arr(ids.map(() => 'ok'))];
    const conflict = v.noUnique ? '(id)' : '(webhook_id, event_id)';
    const ins = v.attempts === 'table' ? `ins AS (INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at, leased_until, last_status_code, last_error, delivered_at, created_at, updated_at)
         SELECT r.id, r.webhook_id, r.event_id, r.organization_id, r.event_type, r.status, 1, NULL, NULL, r.status_code, r.error, now(), to_timestamp(r.started_ms / 1000), now() FROM r ON CONFLICT ${conflict} DO NOTHING RETURNING id),
       att AS (INSERT INTO delivery_attempts (id, delivery_id, attempt_no, status_code, duration_ms, error, response_snippet, started_at)
         SELECT r.attempt_id, r.id, 1, r.status_code, r.duration_ms, r.error, r.snippet, to_timestamp(r.started_ms / 1000) FROM r JOIN ins ON ins.id = r.id)`
      : `ins AS (INSERT INTO deliveries (id, webhook_id, event_id, organization_id, event_type, status, attempts, next_attempt_at, leased_until, last_status_code, last_error, delivered_at, created_at, updated_at, attempt_log)
         SELECT r.id, r.webhook_id, r.event_id, r.organization_id, r.event_type, r.status, 1, NULL, NULL, r.status_code, r.error, now(), to_timestamp(r.started_ms / 1000), now(),
           jsonb_build_array(jsonb_build_object('attemptNo', 1, 'statusCode', r.status_code, 'durationMs', r.duration_ms, 'error', r.error, 'responseSnippet', r.snippet, 'startedAt', r.started_ms)) FROM r ON CONFLICT ${conflict} DO NOTHING RETURNING id)`;
    t0 = pgCpu();
    await c.query(`WITH r AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::int[], $9::text[], $10::float8[], $11::text[], $12::int[], $13::text[])
           AS r(id, webhook_id, event_id, organization_id, event_type, status, next_ms, status_code, error, started_ms, attempt_id, duration_ms, snippet)), ${ins}
       ${v.mark ? `, fanned AS (UPDATE events SET fanned_out_at = now() WHERE id = ANY($14::text[]) AND fanned_out_at IS NULL)` : ''}
       SELECT r.id FROM r WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.id = r.id)`, v.mark ? [...P, arr(ids)] : P);
    t1 = pgCpu(); log += t1 - t0;
  }
  await c.end();
  console.log(`${name.padEnd(16)} outbox ${(outbox / N * 1e6).toFixed(1)} µs/event   log ${(log / N * 1e6).toFixed(1)} µs/delivery   total ${((outbox + log) / N * 1e6).toFixed(1)}`);
  const a2 = new Client({ host: '127.0.0.1', user: 'postgres', database: 'postgres' }); await a2.connect(); await a2.query(`DROP DATABASE ${db}`); await a2.end();
}
(async () => { for (const _round of [1, 2]) for (const name of (process.argv[2] ? process.argv[2].split(',') : Object.keys(variants))) await run(name); })().catch((e) => { console.error(e); process.exit(1); });

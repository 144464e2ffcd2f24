#!/usr/bin/env node
// PostgreSQL's CPU per message of the two statements every send runs, through the real repository on a throwaway
// database: the accept (MessageQueueRepository.insertAcceptedMany, the API's group of plain sends of one session) and the
// record (markSentMany with the message.sent outbox row, the gateway's). Four sessions in parallel, groups of
// BENCH_GROUP messages (1: a lone send), after a history of BENCH_HISTORY analyzed rows. CPU is read from /proc for the
// run's own backends, so a loaded machine inflates it less than it does wall time. Prints the figures of a pool left
// to choose its plans (`auto`, the API's) and of the gateway's (GENERIC_PLANS), alternated BENCH_ROUNDS times.
// `node bench/pg-accept-record.js`
'use strict';
const { join } = require('node:path');
require('reflect-metadata');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
const db = require(join(ROOT, 'dist/libs/database/src'));
const { benchRun, cpuBreakdown, cpuSnapshot, seedMessageHistory } = require('./support');

const GROUP = Number(process.env.BENCH_GROUP ?? 1);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 4000);
const HISTORY = Number(process.env.BENCH_HISTORY ?? 20000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SESSIONS = 4;
const { pgBase, database, DATABASE_URL } = benchRun();

/** CPU µs of this run's backends since `before` (a cpuSnapshot): support's breakdown, its `postgres` share. */
function backendsCpuUs(before) {
  const postgres = cpuBreakdown(before, cpuSnapshot(), {}, database).find(([name]) => name === 'postgres');
  return (postgres?.[1] ?? 0) * 1e6;
}

async function measure(extra, orgId, sessions) {
  const ds = db.Db.open(db.poolSettings(DATABASE_URL, extra));
  try {
    const repo = new db.MessageQueueRepository(ds);
    let n = 0;
    const message = (sessionId) => ({
      message: { id: db.newId('msg'), organizationId: orgId, sessionId, waMessageId: `3EB0${db.newId('msg').slice(-18)}`, direction: 'out', chatJid: `4915100000${n++ % 50}@s.whatsapp.net`, from: null, type: 'text', text: `hello ${n}`, status: 'queued' },
      media: null,
    });
    const accepted = [];
    const accept = async (count) => {
      for (let i = 0; i < count; i += GROUP * SESSIONS) {
        await Promise.all(sessions.map(async (s) => {
          const { rows } = await repo.insertAcceptedMany(orgId, s, Array.from({ length: GROUP }, () => message(s)), ['working']);
          accepted.push(...rows.keys());
        }));
      }
    };
    const record = async (ids) => {
      for (let i = 0; i < ids.length; i += GROUP * SESSIONS) {
        await Promise.all(Array.from({ length: SESSIONS }, async (_, k) => {
          const part = ids.slice(i + k * GROUP, i + (k + 1) * GROUP);
          if (part.length === 0) return;
          const envelopes = part.map((id) => ({ id: db.newId('evt'), event: 'message.sent', organizationId: orgId, sessionId: sessions[k], timestamp: new Date().toISOString(), payload: { id, status: 'sent' } }));
          await repo.markSentMany(part.map((id) => ({ id, sentAt: Date.now(), raw: Buffer.alloc(90, 1) })), new db.OutboxRows(envelopes, envelopes.map((e) => JSON.stringify(e))));
        }));
      }
    };
    // warm: every connection prepared and past its first five executions
    await accept(400);
    await record(accepted.splice(0));
    let before = cpuSnapshot();
    await accept(MESSAGES);
    const acceptUs = backendsCpuUs(before) / MESSAGES;
    const ids = accepted.splice(0);
    before = cpuSnapshot();
    await record(ids);
    return { acceptUs, recordUs: backendsCpuUs(before) / ids.length };
  } finally {
    await ds.close();
  }
}

async function main() {
  await db.migrate(DATABASE_URL);
  const setup = new Client({ connectionString: DATABASE_URL });
  await setup.connect();
  const orgId = db.newId('org');
  const sessions = Array.from({ length: SESSIONS }, () => db.newId('ses'));
  try {
    await setup.query(`INSERT INTO organizations (id, name) VALUES ($1, 'bench')`, [orgId]);
    for (const s of sessions) {
      await setup.query(`INSERT INTO sessions (id, organization_id, label, status, desired_state, wa_jid) VALUES ($1, $2, 'bench', 'working', 'running', '15550001111@s.whatsapp.net')`, [s, orgId]);
    }
    await seedMessageHistory(setup, orgId, sessions, HISTORY, '15550009999@s.whatsapp.net');
    console.log(`PostgreSQL CPU per message (µs, this run's backends): ${MESSAGES} messages over ${SESSIONS} sessions in groups of ${GROUP}, after ${HISTORY} analyzed rows`);
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, extra] of [['auto (the API pool)', { max: SESSIONS }], ['generic (the gateway pool)', { max: SESSIONS, ...db.GENERIC_PLANS }]]) {
        const { acceptUs, recordUs } = await measure(extra, orgId, sessions);
        console.log(`  ${name.padEnd(28)} accept ${acceptUs.toFixed(0).padStart(5)}   record ${recordUs.toFixed(0).padStart(5)}`);
      }
    }
  } finally {
    await setup.end();
    const admin = new Client({ connectionString: `${pgBase}/postgres` });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

#!/usr/bin/env node
// The floor of bench:messages (issue 24 item 1): the least a durable send path must do, built from the same blocks as
// the product (Express 5, node-postgres, ioredis, the SimEngine connection) and nothing else: no auth, no limits, no
// validation, no events, no framework.
//
//   node bench/messages-floor.js api       a bare Express POST /sessions/:id/messages with the JSON parsed, one named
//                                          prepared INSERT of the message, one PUBLISH of the session id, 202
//   node bench/messages-floor.js consumer  one SimEngine connection per session (paired on the simulator); on a
//                                          signal it drains the session: a prepared SELECT of the queued rows (32 at a
//                                          time, in insert order), each sent through the connection and recorded
//                                          `sent` with one prepared UPDATE, one at a time (as a session sends)
//
// Both are child processes of bench/messages.bench.js (forked with IPC: they answer 'ready' with their port or
// nothing), so their CPU is measured apart like the pipeline's. The table is created by the bench (createFloorTable).
'use strict';
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const FLOOR_TABLE_SQL = `CREATE TABLE IF NOT EXISTS floor_messages (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  session_id text NOT NULL,
  wa_message_id text NOT NULL,
  chat_jid text NOT NULL,
  text text NOT NULL,
  status text NOT NULL DEFAULT 'queued',
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
CREATE INDEX IF NOT EXISTS floor_messages_queued ON floor_messages (session_id, seq) WHERE status = 'queued';`;

/**
 * The floor's table with `count` messages already sent (as many as the pipeline's history, both analyzed after):
 * `db` a connected pg client on the run's database.
 */
async function createFloorTable(db, count, chatJid) {
  await db.query(FLOOR_TABLE_SQL);
  await db.query(
    `INSERT INTO floor_messages (id, session_id, wa_message_id, chat_jid, text, status, sent_at)
     SELECT 'history-' || i, 'floor-history', 'HISTORY' || i, $1, 'history ' || i, 'sent', now() - interval '1 day' FROM generate_series(1, $2::int) AS i`,
    [chatJid, count],
  );
}

const channel = () => `${process.env.REDIS_KEY_PREFIX}:floor-sends`;

async function api() {
  const express = require('express');
  const { Pool } = require('pg');
  const IORedis = require('ioredis');
  const { randomBytes } = require('node:crypto');
  const { ulid } = require('ulid');
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const redis = new IORedis(process.env.REDIS_URL);
  const app = express();
  app.use(express.json({ limit: '1mb' }));
  app.post('/sessions/:id/messages', async (req, res) => {
    try {
      const { to, text } = req.body;
      const { rows } = await pool.query({
        name: 'floor_insert',
        text: `INSERT INTO floor_messages (id, session_id, wa_message_id, chat_jid, text) VALUES ($1, $2, $3, $4, $5)
               RETURNING id, session_id, wa_message_id, chat_jid, text, status, created_at`,
        values: [`msg_${ulid()}`, req.params.id, `3EB0${randomBytes(9).toString('hex').toUpperCase()}`, to, text],
      });
      await redis.publish(channel(), req.params.id);
      const r = rows[0];
      res.status(202).json({ id: r.id, sessionId: r.session_id, waMessageId: r.wa_message_id, chatJid: r.chat_jid, text: r.text, status: r.status, createdAt: r.created_at.getTime() });
    } catch (err) {
      res.status(500).json({ error: String(err) });
    }
  });
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

async function consumer() {
  const { Pool } = require('pg');
  const IORedis = require('ioredis');
  const { SimEngine } = require(join(ROOT, 'dist/apps/gateway/src/engine/sim/sim.engine'));
  const logger = require('pino')({ level: 'silent' });
  const simUrl = process.env.FLOOR_SIM_URL;
  const sessionIds = JSON.parse(process.env.FLOOR_SESSIONS);
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const engine = new SimEngine({ simUrl });
  const conns = new Map();
  for (const [s, sessionId] of sessionIds.entries()) {
    let creds = null;
    let opened;
    const open = new Promise((r) => (opened = r));
    const auth = {
      sessionId,
      readCreds: async () => creds,
      writeCreds: async (c) => void (creds = c),
      readKeys: async () => ({}),
      writeKeys: async () => undefined,
      clear: async () => void (creds = null),
    };
    const conn = await engine.connect({
      sessionId,
      auth,
      logger,
      onEvent: async (e) => {
        if (e.type === 'qr') {
          void fetch(`${simUrl}/sim/sessions/${sessionId}/scan`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ phoneNumber: `1555300000${s}` }),
          });
        }
        if (e.type === 'open') opened();
      },
    });
    await open;
    conns.set(sessionId, conn);
  }
  const draining = new Map(); // sessionId → 'running' | 'again'
  const drain = async (sessionId) => {
    const conn = conns.get(sessionId);
    for (;;) {
      const { rows } = await pool.query({
        name: 'floor_next',
        text: `SELECT id, wa_message_id, chat_jid, text FROM floor_messages WHERE session_id = $1 AND status = 'queued' ORDER BY seq LIMIT 32`,
        values: [sessionId],
      });
      for (const r of rows) {
        await conn.send({ waMessageId: r.wa_message_id, to: r.chat_jid, content: { type: 'text', text: r.text }, quoted: null, mentions: [] });
        await pool.query({ name: 'floor_sent', text: `UPDATE floor_messages SET status = 'sent', sent_at = now() WHERE id = $1 AND status = 'queued'`, values: [r.id] });
      }
      if (rows.length < 32) return;
    }
  };
  const trigger = (sessionId) => {
    if (!conns.has(sessionId)) return;
    if (draining.has(sessionId)) return void draining.set(sessionId, 'again');
    draining.set(sessionId, 'running');
    void (async () => {
      do {
        draining.set(sessionId, 'running');
        await drain(sessionId).catch((err) => console.error('floor drain', err));
      } while (draining.get(sessionId) === 'again');
      draining.delete(sessionId);
    })();
  };
  const sub = new IORedis(process.env.REDIS_URL);
  sub.on('message', (_ch, sessionId) => trigger(sessionId));
  await sub.subscribe(channel());
  process.on('SIGTERM', async () => {
    await Promise.all([...conns.values()].map((c) => c.close().catch(() => undefined)));
    process.exit(0);
  });
  process.send({ ready: true });
}

if (require.main === module) {
  const role = process.argv[2];
  (role === 'api' ? api() : role === 'consumer' ? consumer() : Promise.reject(new Error(`unknown role ${role}`))).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { createFloorTable };

import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors';
import { isStoreUnreachable } from './store-outage';

const sqlState = (code: string, message: string) => Object.assign(new DatabaseError(message, 100, 'error'), { code });
const socket = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: 'connect' });

describe('isStoreUnreachable', () => {
  it.each([
    ['PostgreSQL refusing the connection (stopped)', socket('ECONNREFUSED')],
    ['both address families refusing (AggregateError of Node)', new AggregateError([socket('ECONNREFUSED'), socket('ECONNREFUSED')], '')],
    ['an admin shutdown cutting a session (57P01)', sqlState('57P01', 'terminating connection due to administrator command')],
    ['a server still starting up (57P03)', sqlState('57P03', 'the database system is starting up')],
    ['a connection exception (class 08)', sqlState('08006', 'connection failure')],
    ['a query TypeORM wrapped around a cut connection', new QueryFailedError('SELECT 1', [], sqlState('57P01', 'terminating connection due to administrator command'))],
    ['node-postgres losing its socket', new Error('Connection terminated unexpectedly')],
    ['pg-pool giving up on a connect', new Error('timeout exceeded when trying to connect')],
    ['ioredis after a failed reconnect', new MaxRetriesPerRequestError(0)],
    ['ioredis on a closed connection', new Error('Connection is closed.')],
    ['ioredis past its command timeout', new Error('Command timed out')],
    ['Redis loading its dataset after a restart', new Error('LOADING Redis is loading the dataset in memory')],
  ])('%s → unreachable', (_, err) => {
    expect(isStoreUnreachable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', sqlState('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error TypeORM wrapped', new QueryFailedError('SELEC 1', [], sqlState('42601', 'syntax error'))],
    ['a bug of ours', new TypeError("cannot read properties of undefined (reading 'id')")],
    ['a Redis command refused', new Error('WRONGTYPE Operation against a key holding the wrong kind of value')],
    ['nothing at all', undefined],
  ])('%s → not an outage', (_, err) => {
    expect(isStoreUnreachable(err)).toBe(false);
  });
});

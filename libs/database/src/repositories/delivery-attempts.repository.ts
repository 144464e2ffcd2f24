import { Injectable } from '@nestjs/common';
import { Db } from '../pg';

/** One attempt of a delivery as the API shows it. */
export interface DeliveryAttemptRecord {
  attemptNo: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseSnippet: string | null;
  startedAt: Date;
}

interface AttemptRow {
  attempt_no: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_snippet: string | null;
  started_at: Date;
}

const toRecord = (a: AttemptRow): DeliveryAttemptRecord => ({
  attemptNo: a.attempt_no,
  statusCode: a.status_code,
  durationMs: a.duration_ms,
  error: a.error,
  responseSnippet: a.response_snippet,
  startedAt: a.started_at,
});

/**
 * Reads of `delivery_attempts`. Its rows are written only together with their delivery's new state,
 * in DeliveriesRepository's statements (one round trip per batch).
 */
@Injectable()
export class DeliveryAttemptsRepository {
  constructor(private readonly db: Db) {}

  async listOfDelivery(deliveryId: string): Promise<DeliveryAttemptRecord[]> {
    const rows = await this.db.query<AttemptRow>(
      `SELECT attempt_no, status_code, duration_ms, error, response_snippet, started_at FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt_no, started_at`,
      [deliveryId],
    );
    return rows.map(toRecord);
  }
}

import { explainReason } from './reason-hints';

describe('explainReason', () => {
  it('splits the next attempt off a reason', () => {
    expect(explainReason('connection_lost: Stream Errored (ack) (close code 500); next attempt at 2026-11-25T17:40:00.000Z', 'reconnecting')).toEqual({
      reason: 'connection_lost: Stream Errored (ack) (close code 500)',
      nextAttemptAt: '2026-11-25T17:40:00.000Z',
      hint: expect.stringContaining('reconnects by itself'),
    });
    expect(explainReason('replaced', 'failed').nextAttemptAt).toBeNull();
  });

  it.each([
    ['connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com', 'starting', /network, DNS, proxy/],
    ['connect_failed: connect ECONNREFUSED 1.2.3.4:443', 'starting', /network, DNS, proxy/],
    ['connect_failed: TLS: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)', 'starting', /network, DNS, proxy/],
    ['connect_failed: Stream Errored (unavailable) (close code 503)', 'starting', /retries by itself/],
    ['unlinked_on_phone', 'logged_out', /scan a new QR/],
    ['logged_out: unlinked_on_phone', 'logged_out', /scan a new QR/],
    ['client_version_refused', 'reconnecting', /WHATSAPP_WEB_VERSION/],
    ['forbidden', 'failed', /banned or restricted/],
    ['replaced', 'failed', /Another client/],
    ['pairing_expired', 'starting', /scanned the QR code in time/],
    ['qr_not_scanned', 'failed', /scanned the QR code.*Start/],
    ['pairing_code_dropped: Connection Terminated (close code 428)', 'scan_qr_code', /request a new code/],
    ['pairing_code_dropped: read ECONNRESET', 'starting', /request a new code/],
    ['reconnect_attempts_exhausted: pairing_expired', 'failed', /stopped trying.*phone ready.*Start/],
    ['reconnect_attempts_exhausted: connect_failed: getaddrinfo ENOTFOUND web.whatsapp.com', 'failed', /stopped trying.*network.*Start/],
    ['bad_session', 'failed', /Logout/],
    ['lease_held_elsewhere', 'starting', /Another gateway/],
    ['something_new', 'failed', /Fix the cause above/],
    ['something_new', 'reconnecting', /retries by itself/],
  ])('%s (%s) says what to do', (reason, status, hint) => {
    expect(explainReason(reason, status).hint).toMatch(hint);
  });

  it('points at "the cause above" only when there is a cause to read', () => {
    expect(explainReason('qr_not_scanned', 'failed').hint).not.toMatch(/cause above/);
  });
});

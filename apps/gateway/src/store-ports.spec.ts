import type { SessionEvent } from './store-ports';

/** The `@ts-expect-error` lines are the test: the typecheck fails if the port ever takes a payload the catalog does not describe. */
describe('SessionEvent', () => {
  it('carries a payload only as the catalog describes its type', () => {
    const connected: SessionEvent = { event: 'session.connected', organizationId: 'org_1', sessionId: 'ses_1', payload: { phoneNumber: '4917600000000', waJid: '4917600000000@s.whatsapp.net', waLid: null } };
    // @ts-expect-error: session.disconnected carries the close's reason, status code and message
    const wrong: SessionEvent = { event: 'session.disconnected', organizationId: 'org_1', sessionId: 'ses_1', payload: { phoneNumber: '4917600000000' } };
    // @ts-expect-error: the event of a session names the session
    const sessionless: SessionEvent = { event: 'auth.qr', organizationId: 'org_1', sessionId: null, payload: { qr: '2@abc', expiresAt: 1 } };
    expect([connected, wrong, sessionless].map((e) => e.event)).toEqual(['session.connected', 'session.disconnected', 'auth.qr']);
  });
});

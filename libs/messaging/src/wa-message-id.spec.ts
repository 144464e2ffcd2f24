import { newWaMessageId } from './wa-message-id';

describe('newWaMessageId', () => {
  it('is 3EB0 + 18 uppercase hex, and never the same twice across refills of its pool', () => {
    const ids = Array.from({ length: 2000 }, newWaMessageId);
    for (const id of ids) expect(id).toMatch(/^3EB0[0-9A-F]{18}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

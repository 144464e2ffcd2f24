/** Timestamps cross the API as epoch milliseconds. */
export const epochMs = (d: Date | null | undefined): number | null => (d ? d.getTime() : null);

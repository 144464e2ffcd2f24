const PLAIN = /^[A-Za-z0-9_.:-]+$/;

/**
 * A one-dimensional PostgreSQL array literal, for `$n::text[]`/`int[]`/`float8[]` parameters. The pg
 * driver quotes every element through two regex replaces; ids, numbers and nulls (nearly every value
 * the delivery log and the outbox write, envelope texts aside) need no quoting at all. Anything else
 * is quoted and escaped as pg does.
 */
export function pgArray(values: readonly (string | number | null | undefined)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += Number.isFinite(v) ? String(v) : 'NULL';
    // NULL unquoted would be the null value, an empty string must be quoted
    else if (PLAIN.test(v) && v.toUpperCase() !== 'NULL') out += v;
    else out += `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  }
  return out + '}';
}

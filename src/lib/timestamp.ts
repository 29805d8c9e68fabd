/**
 * An RFC 3339 date-time that PostgreSQL's timestamptz and JavaScript's Date both read as
 * the same instant. RFC 3339 alone lets through dates PostgreSQL refuses (year 0000, an
 * offset of +23:59, a leap second with a fraction), and Date.parse reads "2024" or
 * "2024-06-31" without complaint; both once ended as a 500 when PostgreSQL refused them.
 *
 * So: `YYYY-MM-DD`, `T` (or `t` or a space), `hh:mm:ss`, an optional fraction of 1 to 9
 * digits, then `Z` or `±hh:mm`; year 1 to 9999, a real calendar day, hour 0–23, minute and
 * second 0–59 (no leap second: Date.parse refuses it), offset at most ±15:59 (PostgreSQL's
 * bound).
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const MAX_OFFSET_HOURS = 15;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** True when `text` is a date-time the service can store, compare and parse (see above). */
export function isTimestamp(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (m[7] !== undefined && (Number(m[7]) > MAX_OFFSET_HOURS || Number(m[8]) > 59)) return false;
  return true;
}

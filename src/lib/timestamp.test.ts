import { describe, expect, it } from 'vitest';
import { isTimestamp } from './timestamp.js';

describe('isTimestamp', () => {
  it('accepts RFC 3339 date-times that PostgreSQL and Date.parse both read', () => {
    for (const t of [
      '2026-03-01T00:00:00.000Z',
      '2024-02-29T23:59:59Z',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999999Z',
      '2024-01-01t00:00:00z',
      '2024-01-01 00:00:00+15:59',
      '2024-01-01T00:00:00-15:59',
    ]) {
      expect(isTimestamp(t), t).toBe(true);
      expect(Number.isNaN(Date.parse(t)), t).toBe(false);
    }
  });

  it('refuses what PostgreSQL refuses or Date.parse reads differently', () => {
    for (const t of [
      '2024',
      '-1',
      '2024-06-31',
      '2024-06-31T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:60:00Z',
      '2024-01-01T23:59:60Z',
      '2024-01-01T00:00:00+16:00',
      '2024-01-01T00:00:00+23:59',
      '2024-01-01T00:00:00+01:60',
      '2024-01-01T00:00:00+0100',
      '2024-01-01T00:00:00',
      '2024-01-01T00:00:00.1234567891Z',
      '+002024-01-01T00:00:00Z',
      '2024-01-01T00:00:00Z\n',
    ]) {
      expect(isTimestamp(t), t).toBe(false);
    }
  });
});

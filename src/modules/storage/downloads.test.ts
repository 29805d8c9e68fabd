import { describe, expect, it } from 'vitest';
import { DownloadSlots, downloadDeadlineMs } from './downloads.js';

describe('DownloadSlots', () => {
  it('bounds each client apart, within the bound of all, and forgets a client holding none', () => {
    const slots = new DownloadSlots(3, 2);
    const a1 = slots.take('ip:192.0.2.1');
    slots.take('ip:192.0.2.1');
    expect(() => slots.take('ip:192.0.2.1')).toThrow(/by this client at once \(at most 2\)/);
    const b = slots.take('ip:192.0.2.2');
    expect(() => slots.take('ip:192.0.2.3')).toThrow(/from this server/);
    expect([slots.inUse, slots.clients]).toEqual([3, 2]);
    a1();
    a1(); // given back once
    expect([slots.inUse, slots.clients]).toEqual([2, 2]);
    b();
    expect([slots.inUse, slots.clients]).toEqual([1, 1]);
    // However many clients come and go, only those holding a slot are kept.
    for (let i = 0; i < 1000; i++) slots.take(`ip:198.51.100.${i}`)();
    expect([slots.inUse, slots.clients]).toEqual([1, 1]);
  });
});

describe('downloadDeadlineMs', () => {
  it('is the grace plus the size at the minimum rate, never longer than a timer takes', () => {
    const pace = { stallMs: 30_000, graceMs: 30_000, minBytesPerSecond: 8192 };
    expect(downloadDeadlineMs(0, pace)).toBe(30_000);
    expect(downloadDeadlineMs(10 * 1024 * 1024, pace)).toBe(30_000 + 1_280_000);
    // Past 2^31 - 1 ms a Node timer fires at once: the longest one is taken instead.
    expect(downloadDeadlineMs(2 ** 40, { ...pace, minBytesPerSecond: 1 })).toBe(2 ** 31 - 1);
  });
});

import { describe, expect, it } from 'vitest';
import { DownloadSlots } from './downloads.js';

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

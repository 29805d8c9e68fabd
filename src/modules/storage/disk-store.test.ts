import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buffer } from 'node:stream/consumers';
import { sha256 } from '../../lib/hash.js';
import { DiskBlobStore } from './disk-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ons-disk-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('DiskBlobStore', () => {
  // Blobs are shared by every organization: an upload whose bytes some organization stored
  // already must take the same steps as a first one, or its answer's timing tells that the
  // file exists (docs/decisions.md, "An upload's timing does not tell whether its bytes are
  // stored").
  it('writes a blob it holds already again, through a new temporary file renamed over it', async () => {
    const store = new DiskBlobStore(dir);
    const bytes = Buffer.from('the same bytes, uploaded twice');
    const key = sha256(bytes).toString('hex');
    const file = path.join(dir, key.slice(0, 2), key.slice(2, 4), key);

    await store.put(key, bytes);
    const first = await stat(file);
    await store.put(key, bytes);
    const second = await stat(file);

    // A new file took the name (rename over the old one), rather than nothing happening.
    expect(second.ino).not.toBe(first.ino);
    expect(await readFile(file)).toEqual(bytes);
    const opened = await store.open(key);
    expect(opened?.size).toBe(bytes.length);
    expect(await store.size(key)).toBe(bytes.length);
    expect(await buffer(opened!.body)).toEqual(bytes);
    // No temporary file is left behind.
    expect(await readdir(path.dirname(file))).toEqual([key]);
  });

  it('answers null for a blob it does not hold', async () => {
    const store = new DiskBlobStore(dir);
    expect(await store.open('ab'.repeat(32))).toBeNull();
    expect(await store.size('ab'.repeat(32))).toBeNull();
  });
});

import { loadNativeAddon } from './native.js';

/** The native Keccak sponge of the `keccak` package (its `src/addon.cc`). */
interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  /** Pads (Keccak's own 0x01 suffix) on the first call, then answers `length` bytes. */
  squeeze(length: number): Buffer;
}

// The native Keccak binding only (about 8x faster than pure JS on an action text). Its sponge
// is used directly: the package's hash object is a stream, whose set-up cost more than the
// hashing of an action's text (docs/performance.md, session 19).
const KeccakStateClass = loadNativeAddon<new () => KeccakState>('keccak');
/** One sponge, reset for every hash: a hash never waits, so no two calls share it at once. */
const state = new KeccakStateClass();

/** Keccak-256 (Ethereum's, not SHA3-256) of the parts, concatenated. */
export function keccak256(...parts: Uint8Array[]): Buffer {
  state.initialize(1088, 512);
  // The binding takes Buffers only; a view over the same memory costs no copy.
  for (const part of parts) {
    state.absorb(
      Buffer.isBuffer(part) ? part : Buffer.from(part.buffer, part.byteOffset, part.length),
    );
  }
  return state.squeeze(32);
}

// The signature-recovery thread (see recover-pool.ts). Plain JavaScript so that it loads the
// same way under tsx, the test runner and a compiled build. It receives batches of
// [text, signature (64 bytes), recovery id] and answers, in order, the lowercase 0x address
// whose EIP-191 signature over the text each is (eip191.ts), or null when one does not recover.
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const secp = require('secp256k1/bindings');
// Keccak's native sponge itself, loaded as keccak.ts loads it: the package's hash object is
// a stream, whose set-up cost more than hashing the text.
const keccakDir = path.dirname(require.resolve('keccak/package.json'));
const KeccakState = createRequire(path.join(keccakDir, 'package.json'))('node-gyp-build')(
  keccakDir,
);
const sponge = new KeccakState();

const PREFIX = '\x19Ethereum Signed Message:\n';

/** Keccak-256 of the Buffers, concatenated. */
function keccak256(...parts) {
  sponge.initialize(1088, 512);
  for (const part of parts) sponge.absorb(part);
  return sponge.squeeze(32);
}

parentPort.on('message', (batch) => {
  const out = batch.map(([text, signature, recid]) => {
    try {
      const message = Buffer.from(text, 'utf8');
      const digest = keccak256(Buffer.from(`${PREFIX}${message.length}`, 'latin1'), message);
      const pub = secp.ecdsaRecover(signature, recid, digest, false);
      const hash = keccak256(Buffer.from(pub.buffer, pub.byteOffset + 1, 64));
      return `0x${hash.toString('hex', 12)}`;
    } catch {
      return null;
    }
  });
  parentPort.postMessage(out);
});

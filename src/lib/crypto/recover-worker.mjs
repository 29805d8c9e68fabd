// The signature-recovery thread (see recover-pool.ts). Plain JavaScript so that it loads the
// same way under tsx, the test runner and a compiled build. It receives batches of
// [text, signature (64 bytes), recovery id] and answers, in order, the lowercase 0x address
// whose EIP-191 signature over the text each is (eip191.ts), or null when one does not recover.
import { Buffer } from 'node:buffer';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const secp = require('secp256k1/bindings');
const createKeccak = require('keccak/bindings');

const PREFIX = '\x19Ethereum Signed Message:\n';

parentPort.on('message', (batch) => {
  const out = batch.map(([text, signature, recid]) => {
    try {
      const message = Buffer.from(text, 'utf8');
      const digest = createKeccak('keccak256')
        .update(Buffer.from(`${PREFIX}${message.length}`, 'latin1'))
        .update(message)
        .digest();
      const pub = secp.ecdsaRecover(signature, recid, digest, false);
      const hash = createKeccak('keccak256')
        .update(Buffer.from(pub.buffer, pub.byteOffset + 1, 64))
        .digest();
      return `0x${hash.toString('hex', 12)}`;
    } catch {
      return null;
    }
  });
  parentPort.postMessage(out);
});

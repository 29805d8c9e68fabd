import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { hashBytes } from './formulas.js';

/** A batch's proof as the explorer shows it (docs/batches.md, "Proof"). */
export interface BatchProof {
  type: string;
  value: string;
  public_values: string;
  vkey: string;
  message: string;
}

/**
 * What proves a sealed batch. The default attests; a zero-knowledge prover proving the
 * batch's state transition can replace it without touching the sealer.
 */
export interface Prover {
  prove(commitment: string): Promise<{ proof: BatchProof; proofId: string }>;
}

export const ATTESTATION_TYPE = 'ed25519-attestation';
export const ATTESTATION_MESSAGE =
  'Ed25519 attestation by the service batch key: it proves this batch header comes from the ' +
  'service (origin), not that its state transition is valid.';

/** The SPKI DER prefix of a raw 32-byte Ed25519 public key (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The raw 32-byte public key of an Ed25519 key, `0x` + hex. */
export function rawPublicKey(key: KeyObject): string {
  const der = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return `0x${der.subarray(ED25519_SPKI_PREFIX.length).toString('hex')}`;
}

/** Checks an attestation: `value` is the Ed25519 signature of the commitment by `vkey`. */
export function verifyAttestation(proof: BatchProof, commitment: string): boolean {
  try {
    if (proof.type !== ATTESTATION_TYPE || proof.public_values !== commitment) return false;
    const raw = Buffer.from(proof.vkey.replace(/^0x/, ''), 'hex');
    const sig = Buffer.from(proof.value.replace(/^0x/, ''), 'hex');
    if (raw.length !== 32 || sig.length !== 64) return false;
    const key = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, raw]),
      format: 'der',
      type: 'spki',
    });
    return verify(null, hashBytes(commitment), key, sig);
  } catch {
    return false;
  }
}

/**
 * The default prover: signs the commitment's 32 bytes with the service's Ed25519 batch key.
 * `proof_id` is `0x` + H(type ‖ 0x00 ‖ signature): the same proof always has the same id.
 */
export class Ed25519Prover implements Prover {
  private readonly key: KeyObject;
  readonly publicKey: string;

  constructor(privateKeyPem: string) {
    this.key = createPrivateKey(privateKeyPem);
    this.publicKey = rawPublicKey(this.key);
  }

  prove(commitment: string): Promise<{ proof: BatchProof; proofId: string }> {
    const signature = sign(null, hashBytes(commitment), this.key);
    const proof: BatchProof = {
      type: ATTESTATION_TYPE,
      value: `0x${signature.toString('hex')}`,
      public_values: commitment,
      vkey: this.publicKey,
      message: ATTESTATION_MESSAGE,
    };
    const proofId = createHash('sha256')
      .update(ATTESTATION_TYPE)
      .update(Buffer.of(0))
      .update(signature)
      .digest('hex');
    return Promise.resolve({ proof, proofId: `0x${proofId}` });
  }
}

import { describe, expect, it } from 'vitest';
import { fieldLabel } from './labels.js';

describe('fieldLabel', () => {
  it('says an API field name in words', () => {
    expect(fieldLabel('integrity_hash')).toBe('Integrity hash');
    expect(fieldLabel('prev_integrity_root')).toBe('Previous integrity root');
    expect(fieldLabel('l2_finalization_tx_hash')).toBe('L2 finalization transaction hash');
    expect(fieldLabel('ipfs_url')).toBe('IPFS URL');
    expect(fieldLabel('superseded_ipfs_urls')).toBe('Superseded IPFS URLs');
    expect(fieldLabel('total_fee_wei')).toBe('Total fee (wei)');
    expect(fieldLabel('when_created')).toBe('Created');
    expect(fieldLabel('proof.vkey')).toBe('Proof verification key');
    expect(fieldLabel('proof_id')).toBe('Proof ID');
    expect(fieldLabel('id')).toBe('ID');
    expect(fieldLabel('sequence')).toBe('Sequence');
  });
});

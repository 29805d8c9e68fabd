import { describe, expect, it } from 'vitest';
import { unpadCredential, unpadded } from './base64url.js';

describe('unpadded', () => {
  it('drops the padding a base64url value may carry and keeps an unpadded one as it is', () => {
    for (const bytes of [1, 2, 3, 4, 5, 32, 33]) {
      const raw = Buffer.alloc(bytes, 0xfb);
      const bare = raw.toString('base64url');
      const padded = raw.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
      expect(unpadded(padded)).toBe(bare);
      expect(unpadded(bare)).toBe(bare);
    }
    expect(unpadded('')).toBe('');
    expect(unpadded('==')).toBe('');
  });
});

describe('unpadCredential', () => {
  it('unpads id, rawId and the text fields of response, and nothing else', () => {
    const sent = {
      id: 'AAE=',
      rawId: 'AAE',
      type: 'public-key' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: 'eyJ9==',
        attestationObject: 'o2M=',
        transports: ['usb='],
        publicKeyAlgorithm: -7,
      },
    };
    const copy = unpadCredential(sent);
    expect(copy).toEqual({
      ...sent,
      id: 'AAE',
      rawId: 'AAE',
      response: {
        clientDataJSON: 'eyJ9',
        attestationObject: 'o2M',
        transports: ['usb='],
        publicKeyAlgorithm: -7,
      },
    });
    expect(sent.id).toBe('AAE=');
    expect(sent.response.clientDataJSON).toBe('eyJ9==');
  });
});

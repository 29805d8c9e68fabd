import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { S3BlobStore } from './s3-store.js';

const config = {
  endpoint: 'https://s3.example.test/',
  bucket: 'ons-files',
  region: 'eu-west-1',
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const KEY = 'ab'.repeat(32);

describe('S3BlobStore', () => {
  it('signs a path-style PUT with AWS Signature V4 for the s3 service', async () => {
    const sent: Request[] = [];
    const store = new S3BlobStore(config, async (req) => {
      sent.push(req);
      return new Response(null, { status: 200 });
    });
    await store.put(KEY, Buffer.from('bytes'), 'image/png');
    expect(sent[0]!.headers.get('authorization')).toContain('x-amz-content-sha256');
    const req = sent[0]!;
    expect(req.method).toBe('PUT');
    expect(req.url).toBe(`https://s3.example.test/ons-files/${KEY}`);
    expect(req.headers.get('content-type')).toBe('image/png');
    expect(req.headers.get('x-amz-content-sha256')).toBe(KEY);
    expect(req.headers.get('authorization')).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
    );
  });

  it('answers null for a missing blob and refuses a key that is not a SHA-256 digest', async () => {
    const store = new S3BlobStore(config, async () => new Response(null, { status: 404 }));
    expect(await store.open(KEY)).toBeNull();
    expect(await store.size(KEY)).toBeNull();
    await expect(store.open('../etc/passwd')).rejects.toThrow(/SHA-256/);
  });

  it('streams a body with its length, and refuses one without a length', async () => {
    const bytes = Buffer.from('the stored bytes');
    const store = new S3BlobStore(
      config,
      async () => new Response(bytes, { status: 200, headers: { 'content-length': '16' } }),
    );
    const opened = await store.open(KEY);
    expect(opened?.size).toBe(16);
    expect(await buffer(opened!.body)).toEqual(bytes);
    const unsized = new S3BlobStore(config, async () => new Response(bytes, { status: 200 }));
    await expect(unsized.open(KEY)).rejects.toThrow(/Content-Length/);
    const failing = new S3BlobStore(config, async () => new Response('no', { status: 500 }));
    await expect(failing.open(KEY)).rejects.toThrow(/500/);
  });

  it('reads a length with a signed HEAD, fetching no body', async () => {
    const sent: Request[] = [];
    const store = new S3BlobStore(config, async (req) => {
      sent.push(req);
      return new Response(null, { status: 200, headers: { 'content-length': '16' } });
    });
    expect(await store.size(KEY)).toBe(16);
    expect(sent[0]!.method).toBe('HEAD');
    expect(sent[0]!.url).toBe(`https://s3.example.test/ons-files/${KEY}`);
    expect(sent[0]!.headers.get('authorization')).toMatch(/^AWS4-HMAC-SHA256 /);
    const failing = new S3BlobStore(config, async () => new Response(null, { status: 403 }));
    await expect(failing.size(KEY)).rejects.toThrow(/403/);
  });
});

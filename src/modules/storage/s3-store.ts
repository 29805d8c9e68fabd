import { AwsClient } from 'aws4fetch';
import type { S3Config } from '../../config.js';
import { checkKey, type BlobStore } from './blob-store.js';

type Fetch = (req: Request) => Promise<Response>;

/**
 * Blobs in an S3-compatible bucket (AWS, MinIO, R2, …), path-style URLs
 * `<endpoint>/<bucket>/<key>`, requests signed with AWS Signature V4.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: AwsClient;
  private readonly base: string;

  constructor(
    config: S3Config,
    private readonly send: Fetch = (req) => fetch(req),
  ) {
    this.client = new AwsClient({
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      region: config.region,
      service: 's3',
    });
    this.base = `${config.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(config.bucket)}`;
  }

  /** The signed request for a blob (exposed for the signing test). */
  signed(method: 'PUT' | 'GET' | 'HEAD', key: string, body?: Buffer, type?: string) {
    const headers: Record<string, string> = {};
    if (type) headers['content-type'] = type;
    // The key is the body's SHA-256, so the payload is signed without hashing it again.
    if (body) headers['x-amz-content-sha256'] = key;
    return this.client.sign(`${this.base}/${checkKey(key)}`, {
      method,
      headers,
      body: body ? new Uint8Array(body) : null,
    });
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    const res = await this.send(await this.signed('PUT', key, bytes, contentType));
    if (!res.ok) throw new Error(`S3 PUT failed with ${res.status}`);
  }

  async get(key: string): Promise<Buffer | null> {
    const res = await this.send(await this.signed('GET', key));
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`S3 GET failed with ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }
}

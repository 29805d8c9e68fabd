import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { AwsClient } from 'aws4fetch';
import type { S3Config } from '../../config.js';
import { checkKey, type BlobBody, type BlobStore } from './blob-store.js';

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

  /** The object's body as it arrives (fetch reads ahead only a little), never buffered whole. */
  async open(key: string): Promise<BlobBody | null> {
    const res = await this.send(await this.signed('GET', key));
    const size = Number(res.headers.get('content-length') ?? NaN);
    if (res.status === 404 || !res.ok || !res.body || !Number.isSafeInteger(size) || size < 0) {
      // The connection is given back only once its body is read or cancelled.
      await res.body?.cancel().catch(() => undefined);
      if (res.status === 404) return null;
      throw new Error(
        res.ok ? 'S3 GET answered without a Content-Length' : `S3 GET failed with ${res.status}`,
      );
    }
    return { size, body: Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>) };
  }

  /** The object's length from a HEAD request: no body is fetched. */
  async size(key: string): Promise<number | null> {
    const res = await this.send(await this.signed('HEAD', key));
    await res.body?.cancel().catch(() => undefined);
    if (res.status === 404) return null;
    const size = Number(res.headers.get('content-length') ?? NaN);
    if (!res.ok || !Number.isSafeInteger(size) || size < 0) {
      throw new Error(
        res.ok ? 'S3 HEAD answered without a Content-Length' : `S3 HEAD failed with ${res.status}`,
      );
    }
    return size;
  }
}

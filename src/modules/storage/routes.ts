import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../http/app.js';
import { authOf } from '../../http/auth.js';
import { beginAfterBody } from '../idempotency/index.js';
import { clientSubject } from '../../lib/client-network.js';
import { invalid } from '../../lib/errors.js';
import { contentDisposition } from './content-disposition.js';
import { cutWhenSlow, DownloadSlots } from './downloads.js';
import { FileIdParams, FileRecord } from './schema.js';
import type { FileHead, StorageService } from './service.js';

const tags = ['storage'];

/** What an upload's Idempotency-Key is bound to: the file's name and bytes, and is_public. */
function uploadFingerprint(file: { filename: string; bytes: Buffer }, isPublic: boolean): string {
  const digest = createHash('sha256').update(file.bytes).digest('hex');
  return JSON.stringify([file.filename, digest, isPublic]);
}

export interface StorageRouteOptions {
  /** UPLOAD_LIMIT_BYTES */
  uploadLimitBytes: number;
  /** STORAGE_MAX_DOWNLOADS: downloads sent at once by this process. */
  maxDownloads: number;
  /** STORAGE_MAX_DOWNLOADS_PER_CLIENT: of those, downloads to one client address. */
  maxDownloadsPerClient: number;
  /** HTTP_IDLE_TIMEOUT_MS: a download whose client takes nothing this long is cut. */
  stallTimeoutMs: number;
  /** STORAGE_DOWNLOAD_GRACE_MS and STORAGE_DOWNLOAD_MIN_BYTES_PER_SECOND: see cutWhenSlow. */
  downloadGraceMs: number;
  downloadMinBytesPerSecond: number;
}

/** The headers of a download, sent alike by GET (before the bytes) and HEAD (alone). */
function fileHeaders(reply: FastifyReply, file: FileHead): FastifyReply {
  // The bytes are served as what they were detected to be, never sniffed, and sandboxed in
  // case a browser opens one directly.
  return reply
    .header('content-type', file.type)
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('content-disposition', contentDisposition(file.name))
    .header('content-length', String(file.size))
    .header(
      'cache-control',
      file.isPublic ? 'public, max-age=31536000, immutable' : 'private, no-store',
    );
}

/**
 * Uploads and downloads. Multipart parsing is registered in this plugin only, with the
 * configured size limit: a file beyond it is 413 code 3. Downloads are streamed, at most
 * `maxDownloads` at once and `maxDownloadsPerClient` to one client (DownloadSlots), and cut
 * when too slow (cutWhenSlow); `HEAD` answers their headers without opening the file.
 */
export function registerStorageRoutes(
  app: App,
  storage: StorageService,
  opts: StorageRouteOptions,
) {
  const slots = new DownloadSlots(opts.maxDownloads, opts.maxDownloadsPerClient);
  const pace = {
    stallMs: opts.stallTimeoutMs,
    graceMs: opts.downloadGraceMs,
    minBytesPerSecond: opts.downloadMinBytesPerSecond,
  };
  void app.register(async (scope: App) => {
    await scope.register(multipart, {
      limits: { fileSize: opts.uploadLimitBytes, files: 1, fields: 4, fieldSize: 64, parts: 5 },
    });

    scope.post(
      '/storage/upload',
      {
        config: { permission: 'storage.create', idempotent: true },
        schema: {
          tags,
          summary: 'Upload a file (multipart field `file`; optional field `is_public`)',
          consumes: ['multipart/form-data'],
          response: { 200: FileRecord },
        },
      },
      async (req, reply) => {
        const auth = authOf(req);
        if (!req.isMultipart()) throw invalid('send the file as multipart/form-data');
        const { file, isPublic } = await readForm(req);
        if (!file)
          throw invalid('the field `file` is required', [{ field: 'file', reason: 'is required' }]);
        if (await beginAfterBody(req, reply, uploadFingerprint(file, isPublic))) return reply;
        return storage.upload(auth, { ...file, isPublic });
      },
    );

    const download = {
      config: { auth: 'optional', permission: 'authenticated' },
      params: FileIdParams,
    } as const;
    scope.get(
      '/storage/files/:id',
      {
        config: download.config,
        // HEAD has a route of its own: through this one it would open and read the file.
        exposeHeadRoute: false,
        schema: {
          tags,
          summary:
            'Download a file (public files without auth; private ones for their organization)',
          params: download.params,
          response: {
            200: Type.Unsafe<Readable>({
              type: 'string',
              format: 'binary',
              description: 'the file bytes',
            }),
          },
        },
      },
      async (req, reply) => {
        // Taken before the file is opened, given back when the answer is over: sent whole,
        // or its connection cut (a client too slow is cut: cutWhenSlow). A client is its
        // address as per-address rate limits count it (TRUST_PROXY decides which).
        const release = slots.take(clientSubject(req.ip));
        let file;
        try {
          file = await storage.read(req.auth, req.params.id);
        } catch (err) {
          release();
          throw err;
        }
        reply.raw.once('close', release);
        // Fastify pipes the stream, reading on only as the socket takes it, and destroys it
        // (closing the descriptor) when the connection closes first.
        return fileHeaders(reply, file).send(cutWhenSlow(file.body, reply.raw, file.size, pace));
      },
    );

    // The same answer without the body, from the record and the stored length: no file is
    // opened and no slot taken (Fastify's own HEAD would run the GET and read the file through).
    scope.head(
      '/storage/files/:id',
      { config: download.config, schema: { tags, params: download.params } },
      async (req, reply) => fileHeaders(reply, await storage.head(req.auth, req.params.id)).send(),
    );
  });
}

/**
 * The upload's file and `is_public`, read from its multipart body. A body that is not
 * well-formed multipart (no boundary, cut off) is 400: the parser throws plain errors.
 */
async function readForm(
  req: FastifyRequest,
): Promise<{ file: { filename: string; bytes: Buffer } | null; isPublic: boolean }> {
  let file: { filename: string; bytes: Buffer } | null = null;
  let isPublic = false;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file) {
          throw invalid('send one file in the field `file`', [
            { field: part.fieldname, reason: 'unexpected file' },
          ]);
        }
        file = { filename: part.filename, bytes: await part.toBuffer() };
      } else if (part.fieldname === 'is_public') {
        if (part.value !== 'true' && part.value !== 'false') {
          throw invalid('is_public must be true or false', [
            { field: 'is_public', reason: 'must be true or false' },
          ]);
        }
        isPublic = part.value === 'true';
      }
    }
  } catch (err) {
    // Ours (an AppError has a code) and Fastify's limits keep their answer.
    const e = err as { code?: unknown; statusCode?: unknown };
    if (e.code !== undefined || e.statusCode !== undefined) throw err;
    throw invalid('the multipart body is malformed', [
      { field: 'body', reason: err instanceof Error ? err.message : 'malformed' },
    ]);
  }
  return { file, isPublic };
}

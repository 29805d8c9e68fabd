import type { Config } from '../../config.js';
import type { BlobStore } from './blob-store.js';
import { DiskBlobStore } from './disk-store.js';
import { S3BlobStore } from './s3-store.js';

/** S3 when S3_ENDPOINT is set, else the local disk under STORAGE_DIR (default ./data/files). */
export function createBlobStore(storage: Config['storage']): BlobStore {
  return storage.s3 ? new S3BlobStore(storage.s3) : new DiskBlobStore(storage.dir);
}

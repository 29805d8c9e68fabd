import { Type } from 'typebox';
import { ImageSchema } from '../objects/index.js';
import { IdParam } from '../../lib/ids.js';

/** The image record (docs/objects.md, "Files"), answered by an upload. */
export const FileRecord = ImageSchema;

export const FileIdParams = Type.Object({ id: IdParam('file') });

/** The multipart form of POST /storage/upload, for the OpenAPI description only. */
export const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'the file; its type is read from the bytes' }),
  is_public: Type.Optional(
    Type.String({ enum: ['true', 'false'], description: 'readable without auth (default false)' }),
  ),
});

import { Type } from 'typebox';
import type { AuthMode } from './auth.js';

/** The flat error body (docs/api.md, "Answers and errors"). */
export const ErrorBody = Type.Object(
  {
    code: Type.Integer({ description: 'gRPC status code' }),
    message: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { description: 'Error' },
);

export function securityFor(auth: AuthMode): Record<string, string[]>[] | null {
  switch (auth) {
    case 'none':
      return null;
    case 'bearer':
      return [{ bearer: [] }];
    case 'optional':
      return [{}, { bearer: [] }, { 'x-api-key': [] }];
    case 'either':
    case 'person':
      return [{ bearer: [] }, { 'x-api-key': [] }];
  }
}

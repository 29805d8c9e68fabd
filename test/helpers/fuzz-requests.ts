import fc from 'fast-check';
import { idKindOfPattern } from '../../src/lib/ids.js';
import {
  DEEP,
  DEEP_JSON,
  forgedCursor,
  hostileJson,
  hostileString,
  schemaValues,
  sortBy,
  type FuzzContext,
  type Schema,
} from './fuzz-values.js';

/** Hostile HTTP requests for one operation of /openapi.json (test/service/fuzz.test.ts). */

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  schema?: Schema;
}

/** One operation of /openapi.json, with the schema of its JSON body if it takes one. */
export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  parameters: Parameter[];
  body: Schema | null;
}

export interface FuzzRequest {
  method: Operation['method'];
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

export interface RequestContext extends FuzzContext {
  /** Credential headers to send, the more likely the more often listed. */
  credentials: Record<string, string>[];
}

/** Percent-encoding that also carries lone surrogates (as their 3-byte WTF-8 form). */
function encode(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

const rawPercent = fc.constantFrom('%', '%zz', '%FF%FE', '%ED%A0%80', '%C0%80', '%00', '..');

/** JSON text; the DEEP marker becomes the nesting it stands for. */
const jsonText = (v: unknown) => JSON.stringify(v).replaceAll(JSON.stringify(DEEP), DEEP_JSON);

/** `requestFor(op)`: an arbitrary request for the operation, with the context's ids. */
export function fuzzRequests(ctx: RequestContext) {
  const { idFor, valueFor } = schemaValues(ctx);

  function queryValue(p: Parameter): fc.Arbitrary<string> {
    if (p.name === 'next') return forgedCursor.map(encode);
    if (p.name === 'sortBy') return sortBy.map(encode);
    const v = fc
      .oneof(valueFor(p.schema ?? {}, p.name, true), valueFor(p.schema ?? {}, p.name, false))
      .map((x) => encode(typeof x === 'string' ? x : (JSON.stringify(x) ?? '')));
    return fc.oneof({ weight: 6, arbitrary: v }, rawPercent);
  }

  function queryFor(op: Operation): fc.Arbitrary<string> {
    const params = op.parameters.filter((p) => p.in === 'query');
    if (params.length === 0) return fc.constant('');
    return fc
      .subarray(params, { maxLength: Math.min(4, params.length) })
      .chain((chosen) =>
        fc.tuple(
          ...chosen.map((p) =>
            fc
              .array(queryValue(p), { minLength: 1, maxLength: 2 })
              .map((vs) => vs.map((v) => `${encodeURIComponent(p.name)}=${v}`).join('&')),
          ),
        ),
      )
      .map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''));
  }

  function pathValue(p: Parameter): fc.Arbitrary<string> {
    const kind = p.schema?.pattern ? idKindOfPattern(p.schema.pattern) : undefined;
    return fc.oneof(
      { weight: 5, arbitrary: kind ? idFor(kind) : fc.constant('x') },
      { weight: 3, arbitrary: hostileString.map((s) => encode(s) || 'x') },
      { weight: 1, arbitrary: rawPercent },
      { weight: 1, arbitrary: fc.constant('a'.repeat(10_000)) },
    );
  }

  function urlFor(op: Operation): fc.Arbitrary<string> {
    const params = op.parameters.filter((p) => p.in === 'path');
    return fc
      .tuple(fc.tuple(...params.map(pathValue)), queryFor(op))
      .map(
        ([values, query]) =>
          params.reduce((url, p, i) => url.replace(`{${p.name}}`, values[i]!), op.path) + query,
      );
  }

  function bodyFor(op: Operation): fc.Arbitrary<string | undefined> {
    const broken = fc.constantFrom('', '{', '{"a":1}{', 'not json', DEEP_JSON);
    if (!op.body) {
      return fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, broken);
    }
    return fc.oneof(
      { weight: 4, arbitrary: valueFor(op.body, 'body', true).map(jsonText) },
      { weight: 6, arbitrary: valueFor(op.body, 'body', false).map(jsonText) },
      { weight: 1, arbitrary: hostileJson.map(jsonText) },
      { weight: 1, arbitrary: broken },
    );
  }

  function headersFor(): fc.Arbitrary<Record<string, string>> {
    return fc
      .tuple(
        fc.constantFrom(...ctx.credentials),
        fc.oneof(
          { weight: 5, arbitrary: fc.constant({}) },
          hostileString.map((s) => ({ 'user-agent': s.slice(0, 256) })),
          hostileString.map((s) => ({ 'x-request-id': s.slice(0, 256) })),
        ),
      )
      .map(([cred, extra]) => ({ ...cred, ...extra }));
  }

  function requestFor(op: Operation): fc.Arbitrary<FuzzRequest> {
    return fc.tuple(urlFor(op), bodyFor(op), headersFor()).map(([url, payload, headers]) => ({
      method: op.method,
      url,
      headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload }),
    }));
  }

  return { requestFor };
}

/** Every operation an OpenAPI document describes, with its JSON body schema if any. */
export function operationsOf(spec: {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: unknown }>>;
}): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const body = (
        op.requestBody as { content?: Record<string, { schema: Operation['body'] }> } | undefined
      )?.content?.['application/json']?.schema;
      out.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        parameters: op.parameters ?? [],
        body: body ?? null,
      });
    }
  }
  return out;
}

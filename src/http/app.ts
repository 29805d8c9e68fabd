import Fastify, { type FastifyBaseLogger, type RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type ErrorObject, type Options as AjvOptions, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type pg from 'pg';
import type { Logger as PinoLogger } from 'pino';
import { Code } from '../lib/errors.js';
import { ulid } from '../lib/ids.js';
import type { GrantSite } from '../lib/grants.js';
import {
  registerAuth,
  type AuthMode,
  type CredentialVerifiers,
  type RoutePermission,
} from './auth.js';
import { registerConsole } from './console.js';
import { registerDocs } from './docs.js';
import { errorHandler } from './errors.js';
import { requestLogger } from './logger.js';
import { registerInputGuard } from './input-guard.js';
import { isTimestamp } from '../lib/timestamp.js';
import type { TrustProxy } from '../config.js';
import type { Registry } from 'prom-client';
import { registerMetrics } from './metrics.js';
import { registerRequestTracing } from './tracing.js';
import { refusalLimit, registerRateLimits, type RateLimitOptions } from './rate-limit/hook.js';
import { ErrorBody, securityFor } from './openapi.js';
import { registerNodeRefusals, serverOptions, type HttpTimeouts } from './server-options.js';
import type { App } from './types.js';
import { registerOffsetRefusal, registerV2Compat, type V2Options } from './v2-compat.js';

/** Feature routes take `App` from here; the hooks above take it from types.ts (no cycle). */
export type { App };

export interface AppOptions {
  logger: FastifyBaseLogger;
  bodyLimitBytes: number;
  timeouts: HttpTimeouts;
  publicUrl: string;
  /** The built web console served at /console (src/http/console.ts); null: none here. */
  consoleDir: string | null;
  verifiers: CredentialVerifiers;
  pool: pg.Pool;
  /** Feature metrics to add to the /metrics registry. */
  metrics?: readonly ((registry: Registry) => void)[];
  /** Null turns rate limiting off (RATE_LIMIT_ENABLED=false). */
  rateLimit: RateLimitOptions | null;
  trustProxy: TrustProxy;
  /** The v2 → v3 redirects and, after their sunset, the 410 answers (docs/api.md, "v2 paths"). */
  v2: V2Options;
  /** Registers the feature routes; runs after the shared hooks are in place. */
  routes: (app: App) => Promise<void> | void;
}

/** One registered route and what it declares (read by tests and scripts/permissions-doc.ts). */
export interface RouteEntry {
  method: string;
  url: string;
  auth: AuthMode;
  permission: RoutePermission | null;
  /** Present on the routes that give power (src/lib/grants.ts, GRANT_SITES). */
  grants?: GrantSite;
  /** Present on the routes that take an `Idempotency-Key` (src/modules/idempotency/routes.ts). */
  idempotent?: true;
  /** Present on the routes whose answers carry tokens: never cached (docs/api.md, "Caching"). */
  noStore?: true;
}

const routeTables = new WeakMap<object, RouteOptions[]>();

/**
 * Every route of the app except the automatic HEAD twins and the v2 compatibility answers
 * (every method of a v2 path, none of them an operation of the API), in registration order.
 */
export function routeTableOf(app: App): RouteEntry[] {
  return (routeTables.get(app) ?? [])
    .filter((r) => r.config?.v2 !== true)
    .flatMap((r) =>
      [r.method]
        .flat()
        .filter((m) => m !== 'HEAD')
        .map((method) => ({
          method,
          url: r.url,
          auth: r.config?.auth ?? 'either',
          permission: r.config?.permission ?? null,
          ...(r.config?.grants ? { grants: r.config.grants } : {}),
          ...(r.config?.idempotent ? { idempotent: true as const } : {}),
          ...(r.config?.noStore ? { noStore: true as const } : {}),
        })),
    );
}

/** Whether an answer's schema holds tokens: a sign-in's `refresh_token` (docs/auth.md). */
function carriesTokens(schema: unknown): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && 'refresh_token' in properties;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,128}$/;
const MAX_PARAM_LENGTH = 1024;

// ajv-formats is CommonJS; under NodeNext its plugin is the namespace's `default`.
const addFormats = addFormatsModule.default;

/**
 * A query, path or header validator that also refuses a number coerced to ±Infinity: Ajv turns
 * the text `1e309` into Infinity and then skips `minimum` and `maximum` (they test only finite
 * numbers), so an "integer from 1 to 100" would reach the database as Infinity. Top-level
 * values and the items of top-level arrays are what coercion makes of text. Only schemas
 * that declare a number are wrapped, so most routes' parameters pay nothing for it.
 */
function finiteOnly(check: ValidateFunction, schema: unknown) {
  // A schema without numbers coerces none: its validator stays as Ajv made it.
  if (!/"(?:integer|number)"/.test(JSON.stringify(schema))) return check;
  const infinite = (v: unknown) => typeof v === 'number' && !Number.isFinite(v);
  const validate = (data: unknown): boolean => {
    if (!check(data)) {
      validate.errors = check.errors;
      return false;
    }
    if (data === null || typeof data !== 'object') return true;
    for (const [name, value] of Object.entries(data)) {
      if (infinite(value) || (Array.isArray(value) && value.some(infinite))) {
        validate.errors = [
          {
            instancePath: `/${name}`,
            schemaPath: '',
            keyword: 'type',
            params: {},
            message: 'must be a finite number',
          },
        ];
        return false;
      }
    }
    validate.errors = null;
    return true;
  };
  validate.errors = null as ErrorObject[] | null | undefined;
  return validate;
}

function makeAjv(options: AjvOptions): Ajv {
  const ajv = new Ajv({
    useDefaults: true,
    removeAdditional: false,
    allErrors: false, // all errors at once would let one request make the validator work hard
    addUsedSchema: false,
    ...options,
  });
  addFormats(ajv);
  // Stricter than RFC 3339 where PostgreSQL is: every date that passes can be stored and
  // compared (src/lib/timestamp.ts), so no date reaches the database to be refused there.
  ajv.addFormat('date-time', isTimestamp);
  return ajv;
}

/**
 * The HTTP application: conventions shared by every route (request ids, errors, auth,
 * metrics, OpenAPI) are installed here once, then the features register their routes.
 */
export async function buildApp(opts: AppOptions): Promise<App> {
  const app = Fastify({
    ...serverOptions(opts.timeouts),
    loggerInstance: opts.logger,
    childLoggerFactory: (logger, bindings, options) =>
      requestLogger(logger as PinoLogger, bindings, options),
    bodyLimit: opts.bodyLimitBytes,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_RE.test(incoming)
        ? incoming
        : `req_${ulid()}`;
    },
    // A hop count as a function (the typed option takes none): the n nearest hops are trusted.
    trustProxy:
      typeof opts.trustProxy === 'number'
        ? (
            (hops: number) => (_address: string, hop: number) =>
              hop < hops
          )(opts.trustProxy)
        : opts.trustProxy,
    // Longer than any id, so an overlong one reaches its params schema, which names it;
    // past this the router refuses the path itself (frameworkErrors below).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The router's refusals (a path that is not UTF-8, an overlong parameter) get the
    // flat error body too, not Fastify's own.
    frameworkErrors: (err, req, reply) => {
      void reply.header('x-request-id', req.id);
      void errorHandler(err, req, reply);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Two validators. Query strings, paths and headers arrive as text, so their numbers and
  // booleans are coerced; a JSON body is typed already, so it is validated as sent (a number
  // where a string belongs is refused, not turned into one). Unknown body fields are refused
  // (additionalProperties: false in each body schema); unknown query parameters are ignored.
  const bodyAjv = makeAjv({ coerceTypes: false });
  const textAjv = makeAjv({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? bodyAjv.compile(schema) : finiteOnly(textAjv.compile(schema), schema),
  );

  // Hooks that never wait take the callback form: no promise and no extra turn per request.
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header('x-request-id', req.id);
    done();
  });
  // Before the auth hook, so its statements are the request's (nothing when tracing is off).
  registerRequestTracing(app);
  // Before the auth hook too: a request without Host, or one that arrives while the process
  // shuts down, is refused whatever its credential.
  registerNodeRefusals(app);

  // Kept by reference and read late: a plugin's own onRoute hook may still change the config.
  const routes: RouteOptions[] = [];
  routeTables.set(app, routes);

  // Defaults every route inherits: the error responses in the description and the
  // security requirement matching its declared credentials.
  app.addHook('onRoute', (route) => {
    routes.push(route);
    const auth = route.config?.auth ?? 'either';
    const schema = (route.schema ??= {});
    const s = schema as Record<string, unknown>;
    const response = (s.response ??= {}) as Record<string, unknown>;
    // An answer with tokens is kept by no cache, asked with a credential or not (the auth
    // hook sends the header; docs/api.md, "Caching").
    if (carriesTokens(response[200])) route.config = { ...route.config, noStore: true };
    response['4XX'] ??= ErrorBody;
    response['5XX'] ??= ErrorBody;
    if (s.security === undefined) {
      const security = securityFor(auth);
      if (security) s.security = security;
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Object Network Service',
        version: '1.0.0',
        description:
          'Wallets, smart objects and signed actions. Errors are `{code, message, details?}`.',
      },
      servers: [{ url: opts.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          'x-api-key': { type: 'apiKey', in: 'header', name: 'x-api-key' },
        },
      },
    },
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    reply
      .status(404)
      .send({ code: Code.NOT_FOUND, message: `no route ${req.method} ${req.url.split('?')[0]}` }),
  );

  registerAuth(app, opts.verifiers, opts.rateLimit ? refusalLimit(opts.rateLimit) : null);
  registerInputGuard(app);
  registerOffsetRefusal(app);
  if (opts.rateLimit) registerRateLimits(app, opts.rateLimit);
  registerMetrics(app, opts.pool, opts.metrics);

  app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
  const https = /^https:\/\//i.test(opts.publicUrl);
  await registerDocs(app, { https });
  await registerConsole(app, { dir: opts.consoleDir, logger: opts.logger, https });
  registerV2Compat(app, opts.v2);
  await opts.routes(app);
  return app;
}

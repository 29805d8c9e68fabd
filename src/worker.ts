import { runProcess } from './run.js';

/**
 * `npm run worker`: a process in the worker role whatever ONS_ROLE says (run.ts,
 * worker-service.ts): the webhook delivery loop and the batch sealer, and an HTTP server on
 * PORT that answers only /healthz, /readyz and /metrics. Beside `npm start` on one host give
 * it a PORT of its own; without DATABASE_URL it uses the embedded server that service runs
 * on DATA_DIR.
 */
runProcess({ role: 'worker' }).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

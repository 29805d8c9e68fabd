import { runProcess } from './run.js';

/** `npm start`: the service in the role ONS_ROLE names (`all` by default); see run.ts. */
runProcess().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

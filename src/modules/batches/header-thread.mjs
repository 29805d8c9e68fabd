// The entry of the batch header thread (header-pool.ts). A worker thread does not take the
// TypeScript loader the process was started with, so it registers tsx itself and then loads
// the thread's code.
import { register } from 'tsx/esm/api';

register();
await import('./header-thread.ts');

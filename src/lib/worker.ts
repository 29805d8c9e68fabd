/**
 * A background loop owned by the service (the API-key last-used flusher, the event bus's
 * group committer): started after the HTTP app, stopped on shutdown (src/server.ts).
 */
export interface Worker {
  name: string;
  start(): void;
  /** Stops taking new work and finishes what is in hand. */
  stop(): Promise<void>;
}

import { createRequire } from 'node:module';

/**
 * Loads a native binding (`secp256k1/bindings`, `keccak/bindings`). Both go through
 * node-gyp-build, which throws when no compiled binary exists; we never fall back to the
 * packages' pure-JS builds (docs/architecture.md, "Choices of the stack": many times slower), so a
 * missing binary stops the service at start with a clear message instead.
 */
export function loadNative<T>(specifier: string, pkg: string): T {
  try {
    return createRequire(import.meta.url)(specifier) as T;
  } catch (err) {
    throw new Error(
      `native ${pkg} binding could not be loaded (${specifier}); ` +
        `rebuild it with \`npm rebuild ${pkg}\` — refusing to fall back to pure JS`,
      { cause: err },
    );
  }
}

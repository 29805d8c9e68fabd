import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Loads a native binding (`secp256k1/bindings`; Keccak's add-on below). Both go through
 * node-gyp-build, which throws when no compiled binary exists; we never fall back to the
 * packages' pure-JS builds (docs/architecture.md, "Choices of the stack": many times slower), so a
 * missing binary stops the service at start with a clear message instead.
 */
export function loadNative<T>(specifier: string, pkg: string): T {
  return loading(specifier, pkg, () => require(specifier) as T);
}

/**
 * A package's compiled add-on itself, as its own `bindings.js` loads it (node-gyp-build from
 * the package's directory), without the JavaScript the package wraps around it.
 */
export function loadNativeAddon<T>(pkg: string): T {
  return loading(`${pkg}'s add-on`, pkg, () => {
    const dir = path.dirname(require.resolve(`${pkg}/package.json`));
    const build = createRequire(path.join(dir, 'package.json'))('node-gyp-build') as (
      dir: string,
    ) => T;
    return build(dir);
  });
}

function loading<T>(what: string, pkg: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    throw new Error(
      `native ${pkg} binding could not be loaded (${what}); ` +
        `rebuild it with \`npm rebuild ${pkg}\` — refusing to fall back to pure JS`,
      { cause: err },
    );
  }
}

/** Stands in for Node modules the SDK's Node-only helpers import (vite.config.ts). */
function unavailable(): never {
  throw new Error('not available in a browser');
}
export const readFile = unavailable;
export const writeFile = unavailable;
export const mkdir = unavailable;
export const join = unavailable;
export default { join: unavailable };

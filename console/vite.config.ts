import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/**
 * The console is built into console/dist and served by the service at /console
 * (src/http/console.ts). The SDK is compiled from its source, as the workspace package it is.
 */
export default defineConfig({
  root: here('.'),
  base: '/console/',
  resolve: {
    alias: {
      '@ons/sdk': here('../sdk/src/index.ts'),
      // The SDK's saved-files reader (verify/files.ts) is for Node; the console never calls
      // it, so its imports resolve to stubs that throw if they ever were.
      'node:fs/promises': here('src/lib/node-stub.ts'),
      'node:path': here('src/lib/node-stub.ts'),
    },
  },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  // `npm run dev -w console`: the page at http://localhost:5173/console/, every other path
  // (the API) passed to a running service (ONS_URL, default http://localhost:8080). For
  // passkeys add http://localhost:5173 to that service's WEBAUTHN_ORIGINS.
  server: {
    port: 5173,
    strictPort: true,
    proxy: {
      '^/(?!console(?:/|$)).*': { target: process.env.ONS_URL ?? 'http://localhost:8080' },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Everything as files: no data: URLs, no inline script (the CSP allows neither).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1500,
  },
});

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Built by `npm run build` into dist/dashboard and served by the API at /dashboard/ (apps/api/src/dashboard).
export default defineConfig({
  root: here('.'),
  base: '/dashboard/',
  plugins: [preact({ prerender: { enabled: false } })],
  resolve: {
    // the wire types and constants the API itself uses (no Nest, no I/O in libs/contracts)
    alias: {
      '@app/contracts': here('../../libs/contracts/src/index.ts'),
      // the client generated from docs/openapi.json (openapi-fetch + the document's types)
      '@app/api-client': here('../../libs/api-client/src/index.ts'),
    },
  },
  build: {
    outDir: here('../../dist/dashboard'),
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 300,
  },
  logLevel: 'warn',
});

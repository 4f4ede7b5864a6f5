import { defineConfig } from 'vite';

// The Studio is served by `auto serve` under /studio/ (hash routing, so the server serves only
// /studio/index.html and /studio/assets/*). The build must be deterministic: content-hashed
// file names, no source maps, no timestamps.
const upstream = process.env.AUTO_URL || 'http://127.0.0.1:8040';

export default defineConfig({
  base: '/studio/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact', legalComments: 'none' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 3000,
    modulePreload: { polyfill: false },
    rollupOptions: {
      output: {
        entryFileNames: 'assets/[name]-[hash].js',
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
        // What the lazy chunks (Mermaid's, CodeMirror's) share with the app goes in chunks of
        // its own, so a change to the app's code changes the app's chunk alone and not the
        // name of every chunk that imports from it: dist/ is committed.
        manualChunks(id: string) {
          if (id.includes('vite/preload-helper') || id.includes('commonjsHelpers')) return 'runtime';
          if (/\/node_modules\/(@codemirror|@lezer|@marijn|codemirror|style-mod|w3c-keyname|crelt)\//.test(id)) {
            return 'vendor-codemirror';
          }
          const shared = /\/node_modules\/(preact|dompurify|marked|diff|uplot)\//.exec(id);
          return shared ? `vendor-${shared[1]}` : undefined;
        },
      },
    },
  },
  server: {
    port: 5173,
    proxy: { '/v1': { target: upstream, changeOrigin: false } },
  },
  preview: {
    port: 4173,
    proxy: { '/v1': { target: upstream, changeOrigin: false } },
  },
});

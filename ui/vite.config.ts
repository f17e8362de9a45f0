// The build is reproducible: fixed file names, no source maps, no build
// time, so that `make ui-check` can compare dist/ with what is committed.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    modulePreload: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 400,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/app.js',
        chunkFileNames: 'assets/[name].js',
        assetFileNames: 'assets/[name][extname]',
      },
    },
  },
  server: {
    // `npm run dev` against a local `peloton dev`.
    proxy: { '/v1': 'http://127.0.0.1:5390' },
  },
});

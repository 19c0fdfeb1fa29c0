import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'info' };
const contexts = await Promise.all([
  // The extension host side.
  esbuild.context({
    ...common,
    entryPoints: ['src/extension.ts'],
    format: 'cjs',
    platform: 'node',
    target: 'node18',
    outfile: 'dist/extension.js',
    external: ['vscode'],
  }),
  // The chat view's page script (markdown-it and DOMPurify bundled in).
  esbuild.context({
    ...common,
    entryPoints: ['src/webview/main.ts'],
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    outfile: 'dist/webview.js',
  }),
]);
if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
}

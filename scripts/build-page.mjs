// SPDX-License-Identifier: Apache-2.0
// Builds the page for serving: web/*.js (with the Wasm loader and its glue) bundled
// and minified into web/dist/app.js, panels opened later in chunks of their own, the
// stylesheet minified, and every file the page loads written beside itself as .gz and
// .br so scripts/serve.mjs (or any static host that serves precompressed files) sends
// them compressed; the Markdown documentation is rendered to web/dist/docs/*.html
// (scripts/build-docs.mjs). Why a bundler at all: README.md, "The page". Runs in scripts/build.sh
// after the Wasm build, and from the page tests, so they always test the sources.
// Usage: node scripts/build-page.mjs
import { readFileSync, writeFileSync, rmSync, readdirSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import * as esbuild from 'esbuild';
import { buildDocs, docSources } from './build-docs.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'web/dist');

/** Modules loaded by import() when their panel first opens: each is a bundle of its own. */
export const LAZY = ['calibrate-panel.js', 'export.js', 'serving.js', 'plan-panel.js', 'hf-model.js'];
/** Stylesheets a panel loaded later links when it is built (not part of the first view's style.css). */
const LAZY_CSS = ['plan-panel.css', 'serving-panel.css'];
/**
 * Web Workers: bundles of their own, started by URL (the serving simulations, the Plan panel's plan,
 * the pricing of big steps).
 */
export const WORKERS = ['serving-worker.js', 'plan-worker.js', 'pricing-worker.js'];
/** Files (relative to the root) the first view loads besides web/dist/*, compressed too. */
const ALSO_COMPRESSED = ['index.html', 'wasm/dist/stepcalc-core.wasm'];

function compress(file) {
  const body = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  writeFileSync(`${file}.br`, brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  }));
}

/**
 * The newest modification time among the page's sources (web/*.js, web/*.css, the loader, the
 * default GPU-hour prices the Plan panel bundles).
 */
function newestSource() {
  const files = readdirSync(path.join(root, 'web')).filter((f) => /\.(js|css)$/.test(f)).map((f) => `web/${f}`);
  files.push('wasm/stepcalc.js', 'wasm/dist/stepcalc-core.js', 'index.html', 'scripts/build-page.mjs',
    'scripts/build-docs.mjs', 'presets/prices.json', ...docSources(root));
  return Math.max(...files.map((f) => statSync(path.join(root, f)).mtimeMs));
}

/**
 * Bundles, minifies and precompresses the page. `ifStale`: only when a source is
 * newer than the last build. Returns esbuild's metafile outputs (bytes per file).
 */
export async function buildPage({ ifStale = false } = {}) {
  const stamp = path.join(out, '.built');
  if (ifStale && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource()) return null;
  if (!existsSync(path.join(root, 'wasm/dist/stepcalc-core.js'))) {
    throw new Error('wasm/dist/stepcalc-core.js is missing: run scripts/build.sh (the Wasm build) first.');
  }
  rmSync(out, { recursive: true, force: true });
  /** @type {import('esbuild').BuildOptions} */
  const common = {
    absWorkingDir: root,
    outdir: out,
    bundle: true,
    format: 'esm',
    minify: true,
    target: ['chrome100', 'firefox100', 'safari15'],
    legalComments: 'none',
    external: ['node:*'], // the loader reads the .wasm from disk only under Node
    metafile: true,
    logLevel: 'warning',
  };
  // The first view is ONE script: the panels opened later are bundles of their own
  // (a few shared helpers are copied into them), loaded by import() beside app.js;
  // esbuild's code splitting would put shared code in a chunk app.js must wait for.
  const lazy = {
    name: 'lazy-panels',
    setup(build) {
      build.onResolve({ filter: /^\.\/[\w-]+\.js$/ },
        (args) => (args.kind === 'dynamic-import' && LAZY.includes(args.path.slice(2))
        ? { path: args.path, external: true } : undefined));
    },
  };
  const builds = await Promise.all([
    esbuild.build({ ...common, entryPoints: ['web/app.js', 'web/style.css'], plugins: [lazy] }),
    esbuild.build({ ...common, entryPoints: [...LAZY, ...WORKERS, ...LAZY_CSS].map((f) => `web/${f}`) }),
  ]);
  buildDocs(root, path.join(out, 'docs'));
  for (const file of readdirSync(out)) if (/\.(js|css)$/.test(file)) compress(path.join(out, file));
  for (const file of ALSO_COMPRESSED) if (existsSync(path.join(root, file))) compress(path.join(root, file));
  writeFileSync(stamp, '');
  return Object.fromEntries(builds.flatMap((b) => Object.entries(b.metafile.outputs))
    .map(([file, o]) => [file, o.bytes]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outputs = await buildPage();
  const list = Object.entries(outputs).map(([f, b]) => `${f} ${(b / 1024).toFixed(1)} KiB`).join(', ');
  console.log(`build-page: ok (${list})`);
}

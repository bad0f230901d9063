// Measures the page (not a test: prints numbers, asserts nothing). Usage:
//   node tests/web/measure.mjs [RUNS]
// Page weight: every file the page loads, gzip -9 and brotli, per file and total.
// Time to first result: navigation start to the first priced, rendered step
// (performance mark "stepcalc:first-result"), cold browser context, median of RUNS.
// Reprice: a 512-request step; price() alone, then after an edit the step time and
// breakdown (one frame), and the rest (other modes, three sweeps, lookups), medians.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { start, root } from './helpers.mjs';

const runs = Number(process.argv[2] || 9);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const env = await start();
const kb = (n) => (n / 1024).toFixed(1);

async function coldPage(url) {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  const files = new Set();
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.origin === new URL(env.base).origin) files.add(decodeURIComponent(u.pathname));
  });
  await page.goto(url);
  await page.waitForFunction(() => performance.getEntriesByName('stepcalc:first-result').length > 0);
  return { context, page, files };
}

try {
  // Page weight.
  const { context, page, files } = await coldPage(env.base);
  const rows = [...files].map((p) => {
    const file = p === '/' ? 'index.html' : p.slice(1);
    const bytes = readFileSync(path.join(root, file));
    return { file, raw: bytes.length, gzip: zlib.gzipSync(bytes, { level: 9 }).length, brotli: zlib.brotliCompressSync(bytes).length };
  }).sort((a, b) => a.file.localeCompare(b.file));
  console.log('file                                   raw KB  gzip KB  brotli KB');
  for (const r of rows) console.log(`${r.file.padEnd(38)} ${kb(r.raw).padStart(6)} ${kb(r.gzip).padStart(8)} ${kb(r.brotli).padStart(10)}`);
  const sum = (k, f = () => true) => rows.filter(f).reduce((a, r) => a + r[k], 0);
  const isPage = (r) => !r.file.startsWith('wasm/');
  console.log(`${'page (index.html, web/)'.padEnd(38)} ${kb(sum('raw', isPage)).padStart(6)} ${kb(sum('gzip', isPage)).padStart(8)} ${kb(sum('brotli', isPage)).padStart(10)}`);
  console.log(`${'total'.padEnd(38)} ${kb(sum('raw')).padStart(6)} ${kb(sum('gzip')).padStart(8)} ${kb(sum('brotli')).padStart(10)}`);
  await context.close();

  // Time to first result, cold context each run.
  const first = [];
  const parts = { files: [], dcl: [], update: [] };
  for (let i = 0; i < runs; i++) {
    const cold = await coldPage(env.base);
    const t = await cold.page.evaluate(() => ({
      first: performance.getEntriesByName('stepcalc:first-result')[0].startTime,
      files: Math.max(...performance.getEntriesByType('resource').map((e) => e.responseEnd)),
      dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
      update: performance.getEntriesByName('stepcalc:update')[0].duration,
    }));
    first.push(t.first);
    for (const k of Object.keys(parts)) parts[k].push(t[k]);
    await cold.context.close();
  }
  console.log(`first priced result after navigation: median ${median(first).toFixed(1)} ms (min ${Math.min(...first).toFixed(1)}, `
    + `max ${Math.max(...first).toFixed(1)}, ${runs} cold loads); medians: last file received ${median(parts.files).toFixed(0)} ms, `
    + `modules evaluated (DOMContentLoaded) ${median(parts.dcl).toFixed(0)} ms, first pricing + render ${median(parts.update).toFixed(1)} ms`);

  // Repricing a 512-request step.
  const request = {
    model: 'llama-3.1-8b-instruct', tp: 1,
    step: {
      prefill_requests: Array.from({ length: 12 }, (_, i) => ({ progress_index: 512 * i, num_new_prefill_tokens: 512 })),
      decode_requests: Array.from({ length: 500 }, (_, i) => ({ progress_index: 200 + 37 * i })),
    },
  };
  const big = await coldPage(`${env.base}#json=${encodeURIComponent(JSON.stringify(request))}`);
  const priceMs = await big.page.evaluate(async (req) => {
    const calc = await (await import('./wasm/stepcalc.js')).load();
    const times = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      calc.price(req);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b)[100];
  }, request);
  const updates = [];
  const rest = [];
  for (let i = 0; i < 20; i++) {
    const done = await big.page.evaluate(() => performance.getEntriesByName('stepcalc:secondary').length);
    await big.page.fill('#tp', String(1 + (i % 2)));
    await big.page.waitForFunction((n) => performance.getEntriesByName('stepcalc:secondary').length > n, done);
    updates.push(await big.page.evaluate(() => performance.getEntriesByName('stepcalc:update').at(-1).duration));
    rest.push(await big.page.evaluate(() => performance.getEntriesByName('stepcalc:secondary').at(-1).duration));
  }
  console.log(`512-request step: price() alone ${priceMs.toFixed(2)} ms; after an edit, step time + breakdown on screen in `
    + `${median(updates).toFixed(1)} ms (median), then other modes + 3 sweeps + lookup table in ${median(rest).toFixed(1)} ms`);
  await big.context.close();
} finally {
  await env.close();
}

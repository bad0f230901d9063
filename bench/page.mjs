// SPDX-License-Identifier: Apache-2.0
// The page in headless Chromium, served from this tree on localhost by scripts/serve.mjs
// (which sends the build's precompressed files):
//   bytes      every response of a cold load: raw, as sent, and gzip -9 of each (the
//              budget's measure, whatever the browser negotiated)
//   first      navigation start -> first step time shown (data-testid="step-time-us"),
//              a fresh browser context (cold cache) per repeat; beside it the same for a
//              blank page (one static number in the HTML), loads interleaved; the budget's
//              figure is the page's over the blank page's (first_over_blank_ms, the median of
//              each pair's difference). Nothing is evaluated in the page before its number: an
//              injected observer notes it and says so on the console (Playwright's polling
//              would run its own script on the page's thread meanwhile)
//   edit       the bench:c step (512 decodes, via a #json= link): one decode row's KV
//              edited -> the number changes; the reprice + render work of that frame
//              including the style and layout it causes (`drawn`); and -> the next frame
//   big step   issue 27's link, one 20,000-token prefill chunk beside 45,000 decodes in the
//              measured mode (priced in the page's pricing worker): the longest task of the page's
//              thread (Chromium's 'longtask' entries) from navigation until the modes, lookups and
//              sweeps are drawn, and while one decode row's KV is edited and all of that redrawn;
//              navigation -> its first number, and edit -> its new number
// `dist` (or STEPCALC_WASM_DIST) serves wasm/dist/* from another build of the module.
// Usage: node bench/page.mjs [REPEATS]; prints JSON. Imported by bench/run.mjs.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { createServer, listen, PAGE_FILES } from '../scripts/serve.mjs';
import { buildPage } from '../scripts/build-page.mjs';
import { benchCases, median } from './wasm.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STEP = '[data-testid="step-time-us"]';
// The baseline: the same server, a page that is only its number (build/bench/blank.html).
const BLANK = 'build/bench/blank.html';
const BLANK_HTML = '<!doctype html><html lang="en"><meta charset="utf-8"><title>blank</title>'
  + '<p><data data-testid="step-time-us" value="1">1 µs</data></p></html>\n';

// Injected before any page script: notes when the step time first shows a number
// (the whole microseconds are the element's `value`, its text the formatted time), or the
// page's error instead, and says which on the console (FIRST_SEEN, or FIRST_SEEN and the error).
const FIRST_SEEN = 'bench:first-seen';
const OBSERVE_FIRST = `(() => {
  const check = () => {
    const el = document.querySelector('${STEP}');
    if (el && /^\\d+$/.test(el.getAttribute('value') ?? el.textContent) && !window.__firstPricedMs) {
      window.__firstPricedMs = performance.now();
      observer.disconnect();
      console.debug('${FIRST_SEEN}');
      return;
    }
    const error = document.querySelector('[data-testid="error"]');
    if (error && !el) {
      observer.disconnect();
      console.debug('${FIRST_SEEN}', error.textContent);
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { childList: true, subtree: true, characterData: true });
})();`;

/** Issue 27's big step: a ~90-character link of 45,001 requests in the measured mode. */
const BIG_LINK = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&p=0.20000&d=1~1*45000';
// Injected before any page script: every long task of the page's thread, [start, duration] in ms.
const OBSERVE_LONG_TASKS = `(() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]);
  }).observe({ type: 'longtask', buffered: true });
})();`;

/** Serves wasm/dist/* from `dist` instead of the tree's build. */
async function routeDist(page, dist) {
  if (!dist) return;
  await page.route('**/wasm/dist/*', (route) => {
    const name = path.basename(new URL(route.request().url()).pathname);
    const type = name.endsWith('.wasm') ? 'application/wasm' : 'text/javascript';
    route.fulfill({ body: readFileSync(path.join(dist, name)), contentType: type });
  });
}

/**
 * Opens `url` and waits for its first priced number (OBSERVE_FIRST's message: nothing runs in
 * the page before it); throws the page's error text when it shows one instead.
 */
async function gotoPriced(page, url, timeoutMs) {
  const seen = page.waitForEvent('console', { predicate: (m) => m.text().startsWith(FIRST_SEEN), timeout: timeoutMs });
  await page.goto(url, { waitUntil: 'commit' });
  const error = (await seen).text().slice(FIRST_SEEN.length).trim();
  if (error) throw new Error(`the page shows an error: ${error.slice(0, 300)}`);
}

/**
 * The big step, `repeats` cold loads in fresh contexts, each with one edit: {load_longest_ms,
 * edit_longest_ms, first_ms, edit_ms} (medians) and every load's and edit's longest task.
 */
async function runBigStep(browser, base, { repeats, timeoutMs, dist }) {
  const loads = [];
  const edits = [];
  const firsts = [];
  const edited = [];
  for (let i = 0; i < repeats; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await routeDist(page, dist);
    await page.addInitScript(OBSERVE_LONG_TASKS);
    await page.addInitScript(OBSERVE_FIRST);
    await gotoPriced(page, `${base}${BIG_LINK}`, timeoutMs);
    firsts.push(await page.evaluate(() => window.__firstPricedMs));
    const drawn = (n) => page.waitForFunction((k) => performance.getEntriesByName('stepcalc:secondary').length >= k,
      n, { timeout: timeoutMs });
    const longest = () => page.evaluate(() => {
      const tasks = window.__longTasks.splice(0);
      return Math.max(0, ...tasks.map(([, duration]) => duration));
    });
    await drawn(1);
    loads.push(await longest());
    const before = await page.getAttribute(STEP, 'value');
    const t0 = await page.evaluate(() => performance.now());
    await page.fill('input[aria-label="Decode 1 KV length"]', String(100000 + 1000 * i)); // moves the number
    await page.waitForFunction(([sel, old]) => document.querySelector(sel)?.getAttribute('value') !== old,
      [STEP, before], { timeout: timeoutMs });
    edited.push(await page.evaluate(() => performance.now()) - t0);
    await drawn(2);
    edits.push(await longest());
    await context.close();
  }
  return { load_longest_ms: median(loads), edit_longest_ms: median(edits), first_ms: median(firsts),
    edit_ms: median(edited), loads, edits, repeats };
}

export async function runPage({ repeats = 7, timeoutMs = 15000, dist = process.env.STEPCALC_WASM_DIST } = {}) {
  if (!readFileSync(path.join(root, 'index.html'), 'utf8').includes('web/')) return { measured: false, why: 'no page' };
  await buildPage({ ifStale: true });
  mkdirSync(path.join(root, 'build/bench'), { recursive: true });
  writeFileSync(path.join(root, BLANK), BLANK_HTML);
  const server = createServer({ allow: [...PAGE_FILES, 'build/bench/'] }); // the blank baseline page
  const port = await listen(server, 0);
  const base = `http://127.0.0.1:${port}/`;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const out = { measured: true, url: base, repeats, dist: dist || 'wasm/dist' };

    // Cold loads: bytes and time to the first priced result, each beside a blank page.
    const firsts = [];
    const blanks = [];
    for (let i = 0; i < repeats; i++) {
      const blankContext = await browser.newContext();
      const blank = await blankContext.newPage();
      await blank.addInitScript(OBSERVE_FIRST);
      await gotoPriced(blank, `${base}${BLANK}`, timeoutMs);
      blanks.push(await blank.evaluate(() => window.__firstPricedMs));
      await blankContext.close();

      const context = await browser.newContext();
      const page = await context.newPage();
      await routeDist(page, dist);
      const files = [];
      if (i === 0) {
        page.on('response', async (response) => {
          try {
            const body = await response.body();
            const sizes = await response.request().sizes();
            files.push({ url: response.url().replace(base, ''), raw: body.length, sent: sizes.responseBodySize,
              encoding: (await response.headerValue('content-encoding')) || 'identity',
              gzip: gzipSync(body, { level: 9 }).length });
          } catch { /* redirects and aborted requests have no body */ }
        });
      }
      await page.addInitScript(OBSERVE_FIRST);
      await gotoPriced(page, base, timeoutMs);
      firsts.push(await page.evaluate(() => window.__firstPricedMs));
      if (i === 0) {
        await page.waitForLoadState('networkidle');
        files.sort((a, b) => b.gzip - a.gzip);
        out.files = files;
        out.raw_bytes = files.reduce((s, f) => s + f.raw, 0);
        out.sent_bytes = files.reduce((s, f) => s + f.sent, 0);
        out.requests = files.length;
        out.gzip_bytes = files.reduce((s, f) => s + f.gzip, 0);
      }
      await context.close();
    }
    out.first_priced_ms = { median: median(firsts), all: firsts };
    out.blank_ms = { median: median(blanks), all: blanks };
    out.first_over_blank_ms = median(firsts.map((f, i) => f - blanks[i]));

    // Edits of a 512-request step.
    const request = benchCases().find((c) => c.tag === 'bench:c').request;
    const context = await browser.newContext();
    const page = await context.newPage();
    await routeDist(page, dist);
    await page.goto(`${base}#json=${encodeURIComponent(JSON.stringify(request))}`);
    await page.waitForFunction(([sel, want]) => {
      const el = document.querySelector(sel);
      return el && (el.getAttribute('value') ?? el.textContent) === String(want);
    },
      [STEP, request.expected.step_time_us], { timeout: timeoutMs });
    const input = 'input[aria-label="Decode 1 KV length"]';
    await page.waitForSelector(input);
    const updated = [];
    const drawn = [];
    const painted = [];
    const kvs = [130000, request.step.decode_requests[0].progress_index];
    for (let i = 0; i < repeats * 3; i++) {
      const t = await page.evaluate(([sel, inputSel, kv]) => new Promise((resolve, reject) => {
        const field = document.querySelector(inputSel);
        const valueOf = () => { const el = document.querySelector(sel); return el &&
          (el.getAttribute('value') ?? el.textContent); };
        const before = valueOf();
        let changedAt = 0;
        performance.clearMeasures('stepcalc:update');
        const observer = new MutationObserver(() => {
          if (changedAt || valueOf() === before) return;
          changedAt = performance.now();
          observer.disconnect();
          // This runs right after the page's update (a microtask of the same frame):
          // the style and layout forced here are the ones that frame would do.
          void document.body.offsetHeight;
          const laidOut = performance.now();
          const start = performance.getEntriesByName('stepcalc:update').at(-1)?.startTime ?? changedAt;
          requestAnimationFrame(() =>
            resolve({ updated: changedAt - t0, drawn: laidOut - start, painted: performance.now() - t0 }));
        });
        observer.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
        setTimeout(() => reject(new Error('the step time did not change')), 5000);
        const t0 = performance.now();
        field.value = String(kv);
        field.dispatchEvent(new Event('input', { bubbles: true }));
      }), [STEP, input, kvs[i % 2]]);
      updated.push(t.updated);
      drawn.push(t.drawn);
      painted.push(t.painted);
    }
    out.edit_512 = { updated_ms: median(updated), drawn_ms: median(drawn), drawn_all: drawn,
      painted_ms: median(painted),
      repeats: updated.length };
    await context.close();

    out.big_step = await runBigStep(browser, base, { repeats: Math.min(repeats, 3), timeoutMs: timeoutMs * 8, dist });
    return out;
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await runPage({ repeats: Number(process.argv[2] ?? 7) });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

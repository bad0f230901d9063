// SPDX-License-Identifier: Apache-2.0
// The page in headless Chromium, served from this tree on localhost by scripts/serve.mjs
// (which sends the build's precompressed files):
//   bytes      every response of a cold load: raw, as sent, and gzip -9 of each (the
//              budget's measure, whatever the browser negotiated)
//   first      navigation start -> first step time shown (data-testid="step-time-us"),
//              a fresh browser context (cold cache) per repeat; beside it the same for a
//              blank page (one static number in the HTML), loads interleaved; the budget's
//              figure is the page's over the blank page's (first_over_blank_ms, the median of
//              each pair's difference). A fresh page's first figure is the reference model's,
//              labelled (data-first="reference"), shown while the measured tables load; the
//              measured number that replaces it is timed too (measured_over_blank_ms). Nothing
//              is evaluated in the page before its number: an injected observer notes it and
//              says so on the console (Playwright's polling would run its own script on the
//              page's thread meanwhile)
//   edit       the bench:c step (512 decodes, via a #json= link): one decode row's KV
//              edited -> the number changes; the reprice + render work of that frame
//              including the style and layout it causes (`drawn`); and -> the next frame
//   big step   issue 27's link, one 20,000-token prefill chunk beside 45,000 decodes in the
//              measured mode (priced in the page's pricing worker): the longest task of the page's
//              thread (Chromium's 'longtask' entries) from navigation until the modes, lookups and
//              sweeps are drawn, and while one decode row's KV is edited and all of that redrawn;
//              navigation -> its first number, and edit -> its new number
//   plan       issue 24's default search in the Plan panel (runPagePlan): a cold load, the panel
//              opened with docs/PLAN.md's question (the model chosen, the rest the panel's
//              defaults: every GPU with measured tables at its price, TP 1-8), Plan pressed:
//              click -> recommendation in the DOM (the panel's data-run 'done'), the first plan
//              (planner module fetched and compiled in the worker) and a second one in the same
//              page; the longest task of the page's thread meanwhile; the recommendation beside
//              `build/stepcalc plan`'s for the request the panel sent and for bench/plan.mjs's
// `dist` (or STEPCALC_WASM_DIST) serves wasm/dist/* from another build of the module.
// Usage: node bench/page.mjs [REPEATS] (everything) or node bench/page.mjs plan [REPEATS] (the plan
// only); prints JSON. Imported by bench/run.mjs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { createServer, listen, PAGE_FILES } from '../scripts/serve.mjs';
import { buildPage } from '../scripts/build-page.mjs';
import { benchCases, median } from './wasm.mjs';
import { planBenchRequest } from './plan.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STEP = '[data-testid="step-time-us"]';
// The baseline: the same server, a page that is only its number (build/bench/blank.html).
const BLANK = 'build/bench/blank.html';
const BLANK_HTML = '<!doctype html><html lang="en"><meta charset="utf-8"><title>blank</title>'
  + '<p><data data-testid="step-time-us" value="1">1 µs</data></p></html>\n';

// Injected before any page script: notes when the step time first shows a number
// (the whole microseconds are the element's `value`, its text the formatted time) and when it
// first shows the priced state's own (not the reference model's figure shown first, marked
// data-first), or the page's error instead, and says which on the console (FIRST_SEEN once the
// state's own number is in, or FIRST_SEEN and the error).
const FIRST_SEEN = 'bench:first-seen';
const OBSERVE_FIRST = `(() => {
  const check = () => {
    const el = document.querySelector('${STEP}');
    if (el && /^\\d+$/.test(el.getAttribute('value') ?? el.textContent)) {
      window.__firstPricedMs ??= performance.now();
      if (el.hasAttribute('data-first')) return;
      window.__measuredMs = performance.now();
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
 * A page in a fresh browser context (a cold cache), the module routed to `dist` (if given) and
 * `scripts` injected before any of the page's.
 * @param {import('playwright-core').Browser} browser @param {string | undefined} dist
 * @param {string[]} scripts
 */
async function coldPage(browser, dist, ...scripts) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await routeDist(page, dist);
  for (const script of scripts) await page.addInitScript(script);
  return { context, page };
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
    const { context, page } = await coldPage(browser, dist, OBSERVE_LONG_TASKS, OBSERVE_FIRST);
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

// Injected before any page script, for the Plan panel: the time of each press of Plan (a
// capturing listener, before the panel's own), the time its root's data-run next leaves
// 'running' (a MutationObserver: right after the task that drew the result) and the frame
// after it, said on the console (PLAN_SEEN and the state); when its progress bar first moves
// (the worker has the planner's module and the tables, and simulates); the plan request the
// panel sent its worker. Nothing polls the page meanwhile.
const PLAN_SEEN = 'bench:plan';
const OBSERVE_PLAN = `(() => {
  window.__plans = [];
  document.addEventListener('click', (event) => {
    if (event.target.closest?.('[data-testid="plan-run"]')) window.__plans.push({ click: performance.now() });
  }, true);
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message?.request?.slo && message?.request?.search) window.__planRequest = message.request;
    return post.call(this, message, ...rest);
  };
  new MutationObserver((records) => {
    const plan = window.__plans.at(-1);
    for (const r of records) {
      if (plan && !plan.progress && r.attributeName === 'value' && Number(r.target.getAttribute('value')) > 0) {
        plan.progress = performance.now();
      }
      const state = r.target.dataset.run;
      if (!plan || plan.done || r.target.id !== 'plan-body' || state === 'running' || state === 'idle') continue;
      plan.done = performance.now();
      plan.state = state;
      requestAnimationFrame(() => {
        plan.frame = performance.now();
        console.debug('${PLAN_SEEN}', state);
      });
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-run', 'value'] });
})();`;

/** `stepcalc plan` of `request`: its recommendation's layout and summary (null when none). */
function nativeRecommendation(request) {
  const cli = path.join(root, 'build/stepcalc');
  const r = JSON.parse(execFileSync(cli, ['plan', '-'], { input: JSON.stringify(request) }).toString());
  const rec = r.recommended;
  return rec ? { gpu: rec.gpu, tp: rec.tp, dp: rec.dp, ep: rec.ep, replicas: rec.replicas, summary: rec.summary,
    candidates: r.search.candidates, simulations: r.search.simulations } : null;
}

/**
 * Issue 24's default search in the page's Plan panel, `repeats` cold loads in fresh contexts, two
 * plans each (the first after the load, then another in the same page): {cold_ms, warm_ms} (click
 * -> recommendation in the DOM, medians), the longest task of the page's thread while the worker
 * planned (`during`) and the task that drew the result (`draw`), and the recommendation beside the
 * native one.
 */
export async function runPagePlan(browser, base, { repeats = 3, timeoutMs = 60000, dist } = {}) {
  const plans = { cold: [], warm: [] };
  let shown;
  let request;
  for (let i = 0; i < repeats; i++) {
    const { context, page } = await coldPage(browser, dist, OBSERVE_LONG_TASKS, OBSERVE_FIRST, OBSERVE_PLAN);
    await gotoPriced(page, base, timeoutMs);
    await page.click('#plan > summary'); // loads the panel's bundle
    await page.getByTestId('plan-run').waitFor({ timeout: timeoutMs });
    await page.getByTestId('plan-model').selectOption(planBenchRequest.model);
    for (const kind of ['cold', 'warm']) {
      const seen = page.waitForEvent('console', { predicate: (m) => m.text().startsWith(PLAN_SEEN),
        timeout: timeoutMs });
      await page.getByTestId('plan-run').click();
      const state = (await seen).text().slice(PLAN_SEEN.length).trim();
      if (state !== 'done') {
        throw new Error(`the plan ended '${state}': ${await page.getByTestId('plan-errors').textContent()}`);
      }
      await page.waitForTimeout(200); // the long tasks' entries are delivered after them
      plans[kind].push(await page.evaluate(() => {
        const p = window.__plans.at(-1);
        const tasks = window.__longTasks.filter(([start, duration]) => start + duration > p.click && start < p.done);
        const drawing = ([start, duration]) => start <= p.done && p.done <= start + duration;
        const longest = (list) => Math.max(0, ...list.map(([, duration]) => duration));
        return { ms: p.done - p.click, frame_ms: p.frame - p.click, progress_ms: (p.progress ?? p.done) - p.click,
          page_long_tasks: window.__longTasks.length,
          during_longest_ms: longest(tasks.filter((t) => !drawing(t))), draw_ms: longest(tasks.filter(drawing)),
          tasks: tasks.length };
      }));
    }
    if (i === 0) {
      request = await page.evaluate(() => window.__planRequest);
      const summary = page.getByTestId('plan-summary');
      const candidate = Number(await summary.getAttribute('data-candidate'));
      const row = await page.locator(`[data-testid="plan-table"] tr[data-candidate="${candidate}"] td`).first()
        .textContent();
      shown = { summary: await summary.textContent(), row,
        status: await page.getByTestId('plan-status').textContent() };
    }
    await context.close();
  }
  const pick = (kind, key) => median(plans[kind].map((p) => p[key]));
  const asked = nativeRecommendation(request);
  const bench = nativeRecommendation(planBenchRequest);
  const same = (n) => Boolean(n) && n.summary === shown.summary;
  return {
    repeats, cold_ms: pick('cold', 'ms'), warm_ms: pick('warm', 'ms'),
    cold_frame_ms: pick('cold', 'frame_ms'), warm_frame_ms: pick('warm', 'frame_ms'),
    cold_progress_ms: pick('cold', 'progress_ms'), warm_progress_ms: pick('warm', 'progress_ms'),
    during_longest_ms: Math.max(...[...plans.cold, ...plans.warm].map((p) => p.during_longest_ms)),
    draw_ms: Math.max(...[...plans.cold, ...plans.warm].map((p) => p.draw_ms)), plans, request, shown, native: asked,
    matches_native: same(asked), matches_bench_request: same(bench), bench_request_native: bench,
  };
}

/** `measure(browser, base)` with the page built, served from this tree and opened in headless Chromium. */
async function withPage(measure) {
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
    return await measure(browser, base);
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

export async function runPage({ repeats = 7, timeoutMs = 15000, dist = process.env.STEPCALC_WASM_DIST } = {}) {
  if (!readFileSync(path.join(root, 'index.html'), 'utf8').includes('web/')) return { measured: false, why: 'no page' };
  return withPage(async (browser, base) => {
    const out = { measured: true, url: base, repeats, dist: dist || 'wasm/dist' };

    // Cold loads: bytes and time to the first priced result, each beside a blank page.
    const firsts = [];
    const measured = [];
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
      const [first, own] = await page.evaluate(() => [window.__firstPricedMs, window.__measuredMs]);
      firsts.push(first);
      measured.push(own);
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
    out.measured_priced_ms = { median: median(measured), all: measured };
    out.measured_over_blank_ms = median(measured.map((f, i) => f - blanks[i]));

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
    try {
      out.plan = await runPagePlan(browser, base, { repeats: Math.min(repeats, 3), timeoutMs: timeoutMs * 4, dist });
    } catch (error) {
      out.plan_error = error.message.split('\n')[0]; // the page's other figures stay
    }
    return out;
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const planOnly = process.argv[2] === 'plan';
  const repeats = Number(process.argv[planOnly ? 3 : 2] ?? (planOnly ? 3 : 7));
  const result = planOnly
    ? await withPage((browser, base) => runPagePlan(browser, base, { repeats, dist: process.env.STEPCALC_WASM_DIST }))
    : await runPage({ repeats });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

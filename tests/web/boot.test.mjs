// SPDX-License-Identifier: Apache-2.0
// The first view's boot order (docs/PAGE.md, "How the first view loads"): the reference model's
// figure for the step is drawn first, labelled, before the kernel packs are read into the module;
// the measured step's number replaces it before anything else is built or read (the panels,
// docs/accuracy.json, the serving bundle); its kernel packs are requested before app.js runs
// (index.html preloads them), and nothing that is filled in or built after the first figure moves
// it. Checked by the order of events in the page and by the number's box, never by a duration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startForTests } from './helpers.mjs';

const env = startForTests();

// Injected before any page script: an ordered log of what the page does, and the number's box
// when it first shows a number.
const OBSERVE = `(() => {
  const log = window.__boot = [];
  const at = (what) => log.push({ what, t: performance.now() });
  const fetch = window.fetch;
  window.fetch = function (url, ...rest) {
    at('fetch ' + new URL(String(url), document.baseURI).pathname);
    return fetch.call(this, url, ...rest);
  };
  // The module's compile and instantiation, and the page's first number format (its first use sets
  // up the browser's number formatting, ~10-15 ms): it is made while the module compiles.
  const { compileStreaming, instantiate } = WebAssembly;
  WebAssembly.compileStreaming = function (...args) {
    at('compile');
    return compileStreaming.apply(this, args);
  };
  WebAssembly.instantiate = function (...args) {
    at('instantiate');
    return instantiate.apply(this, args);
  };
  const NumberFormat = Intl.NumberFormat;
  Intl.NumberFormat = function (...args) {
    if (!log.some((e) => e.what === 'number format')) at('number format');
    return new NumberFormat(...args);
  };
  const seen = new Set();
  const once = (what, when) => { if (!seen.has(what) && when()) { seen.add(what); at(what); } };
  new MutationObserver(() => {
    once('app.js ran', () => document.documentElement.classList.contains('ran'));
    const shown = (first) => {
      const el = document.querySelector('[data-testid="step-time-us"]');
      if (!el || el.hasAttribute('data-first') !== first || !/^\\d+$/.test(el.getAttribute('value') ?? '')) {
        return false;
      }
      const r = el.getBoundingClientRect();
      window.__firstBox ??= { x: r.x, y: r.y + scrollY, width: r.width, height: r.height };
      return true;
    };
    once('reference first', () => shown(true));
    once('number', () => shown(false));
    once('model panel', () => document.querySelector('#model-panel')?.childElementCount > 1);
    once('serving panel', () => document.querySelector('#serving-panel')?.childElementCount > 1);
    once('accuracy line', () => !!document.querySelector('[data-testid="step-accuracy"]'));
  }).observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
})();`;

/** Opens the default page at `viewport` and waits until everything after the number is built. */
async function openSettled(viewport) {
  const page = await env.browser.newPage({ viewport });
  await page.addInitScript(OBSERVE);
  await page.goto(env.base);
  await page.waitForFunction(() => document.querySelector('#summary')?.dataset.serving === 'done' &&
    performance.getEntriesByName('stepcalc:secondary').length > 0 &&
    document.querySelector('[data-testid="step-accuracy"]') && document.querySelector('[data-testid="accuracy"]'),
  null, { timeout: 60000 });
  return page;
}

test('the reference figure, then the measured number, come before the panels, docs/accuracy.json and the serving ' +
  'bundle', async () => {
  const page = await openSettled({ width: 1366, height: 800 });
  const { log, resources } = await page.evaluate(() => ({
    log: window.__boot,
    resources: performance.getEntriesByType('resource').map((e) => ({ path: new URL(e.name).pathname,
      start: e.startTime })),
  }));
  const order = log.map((e) => e.what);
  const index = (what) => {
    const i = order.findIndex((w) => w === what);
    assert.ok(i >= 0, `${what} happened: ${order.join(', ')}`);
    return i;
  };
  const number = index('number');
  assert.ok(index('app.js ran') < number);
  for (const later of ['model panel', 'serving panel', 'accuracy line', 'fetch /docs/accuracy.json']) {
    assert.ok(index(later) > number, `${later} after the number: ${order.join(', ')}`);
  }
  // The default step is priced in the measured mode: its packs are read (once each) before the number,
  // after the reference model's figure is drawn (it needs no tables; decoding them takes a while).
  const reference = index('reference first');
  assert.ok(index('app.js ran') < reference && reference < number, order.join(', '));
  const packs = order.filter((w) => w.startsWith('fetch /wasm/dist/kernels/'));
  assert.ok(packs.length > 0 && packs.every((w) => order.indexOf(w) < number && order.indexOf(w) > reference),
    order.join(', '));
  const shownAt = log[number].t;
  const started = (suffix) => resources.filter((r) => r.path.endsWith(suffix)).map((r) => r.start);
  // The serving bundle and its stylesheet are requested after the number is drawn.
  assert.ok(started('/web/dist/serving.js').length === 1);
  for (const start of [...started('/web/dist/serving.js'), ...started('/docs/accuracy.json')]) {
    assert.ok(start > shownAt, `requested after the number (${start} > ${shownAt})`);
  }
  // The packs' requests (index.html's preloads) start before app.js runs: the page's fetch reuses them.
  const appRan = log[index('app.js ran')].t;
  const packStarts = resources.filter((r) => r.path.startsWith('/wasm/dist/kernels/'));
  assert.equal(packStarts.length, packs.length, 'one request per pack: the preload is reused');
  for (const r of packStarts) assert.ok(r.start < appRan, `${r.path} requested before app.js ran`);
  await page.close();
});

test('the module compiles while the page sets up its number format, before it is instantiated', async () => {
  const page = await openSettled({ width: 1366, height: 800 });
  const order = (await page.evaluate(() => window.__boot)).map((e) => e.what);
  const at = (what) => order.indexOf(what);
  assert.ok(at('compile') >= 0 && at('compile') < at('number format'), order.join(', '));
  assert.ok(at('number format') < at('instantiate'), order.join(', '));
  await page.close();
});

for (const viewport of [{ width: 1366, height: 800 }, { width: 390, height: 800 }]) {
  const name = `at ${viewport.width} px the number does not move from the first figure until the rest is built`;
  test(name, async () => {
    const page = await openSettled(viewport);
    const first = await page.evaluate(() => window.__firstBox);
    const now = await page.evaluate(() => {
      const r = document.querySelector('[data-testid="step-time-us"]').getBoundingClientRect();
      return { x: r.x, y: r.y + scrollY, width: r.width, height: r.height };
    });
    for (const key of ['x', 'y', 'width', 'height']) {
      assert.ok(Math.abs(now[key] - first[key]) < 0.5, `${key}: ${first[key]} at first, ${now[key]} now`);
    }
    await page.close();
  });
}

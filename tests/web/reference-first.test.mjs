// SPDX-License-Identifier: Apache-2.0
// A fresh page in the measured mode shows the reference model's figure for its step first,
// labelled as such, while its GPU's kernel tables load (decoding them holds the page's thread
// for tens of milliseconds), then the measured figure in its place: nothing moves (docs/PAGE.md,
// "How the first view loads"). The test holds the packs back until it has read the first view,
// so what it sees is in an order the test sets, never a race or a duration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startForTests, cliStepTime, pageRequest, settle, MEASURED_NUMBER } from './helpers.mjs';

const env = startForTests();
const FIRST = '[data-testid="step-time-us"][data-first="reference"]';

/** A page whose kernel packs are answered only once `release()` is called (`fail`: then refused). */
async function heldPage(viewport, url = env.base, fail = false) {
  const page = await env.browser.newPage({ viewport });
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(e.message));
  await page.addInitScript(OBSERVE_BOXES);
  let release = () => {};
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/wasm/dist/kernels/*', async (route) => {
    await held;
    if (fail) await route.fulfill({ status: 404, body: 'not found' });
    else await route.continue();
  });
  await page.goto(url);
  return { page, release };
}

// Injected before any page script: the boxes that must not move, noted in the task that draws each
// figure (the reference's, data-first="reference", and the measured one), before anything else runs.
const OBSERVE_BOXES = `(() => {
  window.__boxes = {};
  new MutationObserver(() => {
    const el = document.querySelector('[data-testid="step-time-us"]');
    if (!el) return;
    const which = el.hasAttribute('data-first') ? 'reference' : 'measured';
    if (window.__boxes[which]) return;
    window.__boxes[which] = Object.fromEntries(['[data-testid="step-time-us"]', '#headline', '#h-breakdown',
      '#summary', '#context'].map((sel) => {
      const r = document.querySelector(sel).getBoundingClientRect();
      return [sel, { x: r.x, y: r.y + scrollY, height: r.height }];
    }));
  }).observe(document, { childList: true, subtree: true, attributes: true });
})();`;

for (const viewport of [{ width: 1366, height: 800 }, { width: 390, height: 800 }]) {
  test(`at ${viewport.width} px the reference figure comes first, labelled, and the measured one replaces it ` +
    'in place', async () => {
    const { page, release } = await heldPage(viewport);
    await page.waitForSelector(FIRST);
    const headline = page.locator('#headline');
    // Whose figure it is, beside the number and in the reference line's place; dimmed and busy.
    assert.match(await headline.locator('.big').textContent(), /^[\d.]+ (ms|µs|s) blis-v2 reference figure$/);
    assert.equal(await page.getByTestId('reference-first').textContent(),
      'Reference model (blis-v2) figure: the measured kernel tables for H100 are loading.');
    assert.equal(await headline.getAttribute('aria-busy'), 'true');
    assert.equal(await page.locator('#results.pricing').count(), 1, 'dimmed until the measured figure is in');
    assert.equal(await page.getByTestId('reference').count(), 0);
    assert.match(await page.getByTestId('context').textContent(), /on H100 · TP 1 · mode measured$/);
    // Nothing else is built yet: the panels wait for the measured number.
    assert.equal(await page.locator('#model-panel select, #model-panel input').count(), 0);
    const reference = Number(await page.getAttribute(FIRST, 'value'));

    release();
    await page.waitForSelector(MEASURED_NUMBER);
    const { reference: before, measured: after } = await page.evaluate(() => window.__boxes);
    assert.ok(before && after);
    assert.deepEqual(after, before, 'nothing moved when the measured figure replaced the reference one');
    assert.equal(await page.locator(FIRST).count(), 0);
    assert.equal(await page.getByTestId('reference-first').count(), 0);
    assert.equal(await headline.getAttribute('aria-busy'), 'false');
    assert.doesNotMatch(await headline.textContent(), /reference figure/);
    // The reference line now holds the figure shown first, and both are the CLI's.
    assert.equal(Number(await page.getByTestId('reference').locator('data').getAttribute('value')), reference);
    await settle(page);
    const request = await pageRequest(page);
    assert.equal(request.mode, 'measured');
    assert.equal(Number(await page.getAttribute(MEASURED_NUMBER, 'value')), cliStepTime(request));
    assert.equal(reference, cliStepTime({ ...request, mode: 'blis-v2' }));
    assert.deepEqual(page.problems, []);
    await page.close();
  });
}

test('kernel packs that do not load: the first figure stays, labelled as the reference\'s, and says so', async () => {
  const { page, release } = await heldPage({ width: 1366, height: 800 }, env.base, true);
  await page.waitForSelector(FIRST);
  release();
  await page.getByText('the measured kernel tables for H100 did not load').waitFor();
  assert.equal(await page.locator('#headline').getAttribute('aria-busy'), 'false');
  assert.match(await page.locator('#headline .big').textContent(), /blis-v2 reference figure$/);
  assert.equal(await page.textContent('#stale'), 'The kernel tables for H100 did not load.');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a link in the blis-v2 mode, or a big step, shows no reference figure first', async () => {
  for (const hash of ['#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=blis-v2&p=0.2048&d=512~64*64',
    '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&p=0.20000&d=1~1*4000']) {
    const page = await env.browser.newPage({ viewport: { width: 1366, height: 800 } });
    await page.addInitScript(() => {
      new MutationObserver(() => {
        if (document.querySelector('[data-first]')) window.__sawFirst = true;
      }).observe(document, { childList: true, subtree: true, attributes: true });
    });
    await page.goto(`${env.base}${hash}`);
    await page.waitForSelector(MEASURED_NUMBER, { timeout: 60000 });
    assert.equal(await page.evaluate(() => window.__sawFirst ?? false), false, hash);
    await page.close();
  }
});

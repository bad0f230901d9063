// SPDX-License-Identifier: Apache-2.0
// A step at the request limit must not freeze the page: a 60-character link holding
// 65,536 prefill rows renders a bounded number of DOM nodes (every row list is paged
// or capped; the priced step stays whole), and a keystroke in a row reprices it.
// Counted in nodes, not timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { root, shownStepTime, startForTests } from './helpers.mjs';
import { decodeHash, toRequest } from '../../web/state.js';
import { useCatalogue } from '../../web/catalogue.js';
import { load } from '../../wasm/stepcalc.js';

useCatalogue((await load()).catalogue()); // the page's limits come from the core

const LINK = '#v=1&m=llama-3.1-8b-instruct&p=0.1~15259.1*65536&d=';
const MAX_NODES = 6000; // the default view has ~2,000 elements
const env = startForTests();

/** The CLI's step time (results of big steps exceed the default 1 MB buffer). */
const cliStepTime = (request) => JSON.parse(execFileSync(`${root}/build/stepcalc`, ['price'],
  { input: JSON.stringify(request), maxBuffer: 1 << 28 })).step_time_us;
const elements = (page) => page.evaluate(() => document.getElementsByTagName('*').length);
const secondaryDone = (page, count) => page.waitForFunction(
  (n) => performance.getEntriesByName('stepcalc:secondary').length >= n, count, { timeout: 120000 });

test('a 65,536-row link renders a bounded page that still prices the whole step', async () => {
  const { state } = decodeHash(LINK);
  assert.equal(state.prefill.length, 65536);
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto(`${env.base}index.html${LINK}`);
    await page.waitForSelector('[data-testid="step-time-us"]', { timeout: 120000 });
    assert.equal(await shownStepTime(page), cliStepTime(toRequest(state)));
    await secondaryDone(page, 1); // modes, lookup table and sweeps drawn
    const loaded = await elements(page);
    assert.ok(loaded < MAX_NODES, `${loaded} elements after loading the link`);
    assert.ok(await page.locator('#step-panel tbody tr').count() <= 300 + 1,
      'a page of prefill rows and the empty decode row');
    assert.match(await page.textContent('#step-panel'), /of 65,536 shown; all are priced/);

    // A keystroke in the first row reprices the whole step; the page stays bounded.
    state.prefill[0][1] = 7;
    await page.fill('[aria-label="Prefill 1 new tokens"]', '7');
    await page.waitForFunction((us) =>
      document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') === us,
      String(cliStepTime(toRequest(state))), { timeout: 60000 });
    await secondaryDone(page, 2);
    const edited = await elements(page);
    assert.ok(edited < MAX_NODES, `${edited} elements after a keystroke`);

    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('65,536 decodes at distinct KV lengths: the lookup table grows on request, to a bounded size', async () => {
  const link = '#v=1&m=llama-3.1-8b-instruct&p=&d=1~1*65536';
  const { state } = decodeHash(link);
  const page = await env.browser.newPage();
  try {
    await page.goto(`${env.base}index.html${link}`);
    await page.waitForSelector('[data-testid="step-time-us"]', { timeout: 120000 });
    assert.equal(await shownStepTime(page), cliStepTime(toRequest(state)));
    await secondaryDone(page, 1);
    const heading = await page.textContent('#details h2:has-text("lookup")');
    assert.match(heading, /Every table lookup \(65,5\d\d\)/);
    // Closed at first (the page stays short); opened, it stays open as rows are added.
    assert.equal(await page.$eval('details.lookup-details', (d) => d.open), false);
    await page.click('details.lookup-details summary');
    let clicks = 0;
    for (; clicks < 50; clicks++) {
      assert.equal(await page.$eval('details.lookup-details', (d) => d.open), true);
      const more = page.locator('#details button:has-text("more")');
      if (!(await more.count())) break;
      await more.click();
    }
    assert.ok(clicks < 10, `${clicks} clicks and still more rows on offer`);
    const rows = await page.locator('#details table.lookups tbody tr').count();
    assert.ok(rows <= 2000, `${rows} lookup rows on screen`);
    assert.ok((await page.textContent('#details')).includes('The rest are in the result JSON'));
    const shown = await elements(page);
    assert.ok(shown < MAX_NODES + 2000 * 8, `${shown} elements with the longest lookup table`);
  } finally {
    await page.close();
  }
});

// SPDX-License-Identifier: Apache-2.0
// Issue 27: a big step must not hold the page's thread. The ~90-character link of one
// 20,000-token prefill chunk beside 45,000 decodes in the measured mode (its pricing took the
// page's thread for more than a second on load and on every edit, the other modes' table and
// the sweeps hundreds of milliseconds more) is priced in the pricing worker (web/pricer.js):
// the page shows the CLI's numbers, the reference figure, the other modes, the sweeps and the
// lookups of the whole step, and an edit, a field error and a refused link act as on a small
// step, while the step never reaches the page's own module. Checked structurally, not timed
// (how long pricing takes is the benchmarks' business): a spy the test installs before any page
// script sees every JSON text written or read on the page's thread, and the loader reads every
// full result from JSON (12 MB for this step) and writes a sweep's request as JSON (over 1 MB);
// the page's timeline notes every pricing of a step this big and the thread it ran on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { root, settle, shownStepTime, startForTests } from './helpers.mjs';
import { decodeHash, toRequest } from '../../web/state.js';
import { useCatalogue } from '../../web/catalogue.js';
import { lookupTable } from '../../web/lookups.js';
import { timeUs } from '../../web/dom.js';
import { load } from '../../wasm/stepcalc.js';

useCatalogue((await load()).catalogue()); // the page's limits come from the core

const LINK = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&p=0.20000&d=1~1*45000';
const REQUESTS = 45001;
const BIG_JSON = 500_000; // characters: the step's request as JSON is over a megabyte
const env = startForTests();

// Before any page script: every JSON text the page's thread writes or reads longer than BIG_JSON
// is noted (the workers have globals of their own and are not watched).
const SPY = `(() => {
  const { stringify, parse } = JSON;
  window.__bigJson = [];
  const note = (how, text) => {
    if (typeof text === 'string' && text.length > ${BIG_JSON}) window.__bigJson.push(how + ' ' + text.slice(0, 60));
  };
  JSON.stringify = function (...args) {
    const text = stringify.apply(this, args);
    note('written', text);
    return text;
  };
  JSON.parse = function (text, ...rest) {
    note('read', text);
    return parse.call(this, text, ...rest);
  };
})();`;

/** The CLI's result (a big step's result exceeds the default 1 MB buffer). */
const cliResult = (request) => JSON.parse(execFileSync(`${root}/build/stepcalc`, ['price'],
  { input: JSON.stringify(request), maxBuffer: 1 << 28 }));
const secondaryDone = (page, count) => page.waitForFunction(
  (n) => performance.getEntriesByName('stepcalc:secondary').length >= n, count, { timeout: 120000 });
/** The page's notes of big steps priced: [{what, requests, thread}]. */
const pricings = (page) => page.evaluate(() => performance.getEntriesByName('stepcalc:price').map((e) => e.detail));

/** Opens `link` with the spy; returns the page, its problems and every file it fetched. */
async function open(link) {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = [];
  const fetched = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.context().on('request', (r) => fetched.push(new URL(r.url()).pathname)); // the page's and its workers'
  await page.addInitScript(SPY);
  await page.goto(`${env.base}index.html${link}`);
  await page.waitForSelector('[data-testid="step-time-us"]', { timeout: 120000 });
  return { page, problems, fetched };
}

/** Asserts the page's thread priced no big step: no request of it written as JSON, none noted there. */
async function offThePage(page, what) {
  assert.deepEqual(await page.evaluate(() => window.__bigJson), [], `${what}: a big JSON text on the page's thread`);
  const noted = await pricings(page);
  assert.deepEqual(noted.filter((p) => p.thread !== 'worker'), [], `${what}: priced on the page's thread`);
  return noted;
}

test('the 45,000-decode measured link is priced in the pricing worker, whole, and the page\'s thread never gets it',
  async () => {
    const { state } = decodeHash(LINK);
    assert.equal(state.prefill.length + state.decode.length, REQUESTS);
    const request = toRequest(state);
    const { page, problems, fetched } = await open(LINK);
    try {
      const cli = cliResult(request);
      assert.equal(await shownStepTime(page), cli.step_time_us);
      assert.equal(Number(await page.getAttribute('[data-testid="reference"] data', 'value')),
        cliResult({ ...request, mode: 'blis-v2' }).step_time_us, 'the reference model\'s figure beside it');
      await secondaryDone(page, 1); // the modes, the lookup table and the sweeps drawn
      const modes = await page.locator('#modes table.modes tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
      for (const mode of ['blis-v2', 'corrected']) {
        const row = modes.find((r) => r[0] === mode);
        assert.equal(row?.[1], timeUs(cliResult({ ...request, mode }).step_time_us), `${mode} in the modes' table`);
      }
      assert.equal(await page.locator('#sweeps section.sweep svg.line').count(), 3, 'three sweeps drawn');
      assert.match(await page.textContent('#details'),
        new RegExp(`Every table lookup \\(${lookupTable(cli).total.toLocaleString('en-US')}\\)`));

      const noted = await offThePage(page, 'load');
      assert.ok(noted.some((p) => p.what === 'price' && p.requests === REQUESTS), 'the step priced in the worker');
      assert.ok(noted.some((p) => p.what === 'sweep'), 'its sweeps too');
      // The worker was handed the page's module and packs: nothing is fetched twice.
      const twice = fetched.filter((f, i) => /\.(wasm|bin)$/.test(f) && fetched.indexOf(f) !== i);
      assert.deepEqual(twice, [], 'the .wasm and each kernel pack once');

      // The whole lookup table as CSV: written in the worker from the whole result.
      await page.click('details.lookup-details summary');
      const [file] = await Promise.all([page.waitForEvent('download'),
        page.locator('[aria-label="Export the lookup table"] [data-export="csv"]').click()]);
      const lines = readFileSync(await file.path(), 'utf8').trimEnd().split('\r\n').filter((l) => !/^"?#/.test(l));
      assert.equal(lines[0], 'where,shape,mfu,time_us,how,provenance,note');
      assert.equal(lines.length - 1, lookupTable(cli).total, 'every lookup of the step, not the rows shown');

      // An edit of a row: the new step, priced off the page as well.
      state.decode[0][0] = 100000;
      const edited = cliResult(toRequest(state)).step_time_us;
      assert.notEqual(edited, cli.step_time_us);
      await page.fill('[aria-label="Decode 1 KV length"]', '100000');
      await page.waitForFunction((us) =>
        document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') === us,
      String(edited), { timeout: 60000 });
      await secondaryDone(page, 2);
      await offThePage(page, 'edit');

      // A field the core refuses: its error at the field, the last good result kept.
      const shown = await shownStepTime(page);
      await page.fill('#tp', '0');
      await page.waitForSelector('#setup-panel [data-testid="error"]', { timeout: 60000 });
      assert.equal(await page.textContent('#setup-panel [data-testid="error"]'), 'TP degree must be at least 1.');
      assert.match(await page.textContent('#stale'), /Showing the last good result/);
      assert.equal(await shownStepTime(page), shown);
      await offThePage(page, 'error');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

test('edits of a big step: the newest wins, a refused big link says why, the reference mode too', async () => {
  const link = LINK.replace('mode=measured', 'mode=blis-v2');
  const { state } = decodeHash(link);
  const { page, problems } = await open(link);
  try {
    const cli = cliResult(toRequest(state));
    assert.equal(await shownStepTime(page), cli.step_time_us);
    await secondaryDone(page, 1);
    assert.match(await page.textContent('#details'),
      new RegExp(`Every table lookup \\(${lookupTable(cli).total.toLocaleString('en-US')}\\)`));
    // Three edits, each cancelling the one before: the last is the number shown.
    const field = page.locator('[aria-label="Decode 1 KV length"]');
    for (const kv of ['3000', '30000', '300000']) {
      await field.fill(kv);
      await settle(page);
    }
    state.decode[0][0] = 300000;
    const last = cliResult(toRequest(state)).step_time_us;
    assert.notEqual(last, cli.step_time_us);
    await page.waitForFunction((us) =>
      document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') === us,
    String(last), { timeout: 60000 });
    await secondaryDone(page, 2); // the follow-ups of the last edit (the earlier ones were cancelled)
    await offThePage(page, 'edits');
    // A big link the core refuses, checked in the worker: said as for any link, the step kept.
    const shown = await shownStepTime(page);
    await page.evaluate((h) => { location.hash = h; }, link.replace('tp=1', 'tp=0'));
    await page.waitForFunction(() => /TP degree must be at least 1/.test(document.querySelector('#link-error')
      ?.textContent ?? ''), null, { timeout: 60000 });
    assert.match(await page.textContent('#link-error'), /Your step is still shown/);
    assert.equal(await shownStepTime(page), shown);
    await offThePage(page, 'refused link');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

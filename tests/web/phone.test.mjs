// SPDX-License-Identifier: Apache-2.0
// The page at 390x844: nothing scrolls sideways (the lookup table included, all of
// it), the number stays in sight in a slim sticky bar, not a quarter of the screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, shownStepTime, artifactPath, startForTests, settle } from './helpers.mjs';

const env = startForTests();

const PHONE = { width: 390, height: 844 };

test('at 390 px no part of the page scrolls sideways, the lookup table included', async () => {
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=llama-3.1-70b-instruct&g=H100&tp=4&mode=blis-v2&p=0.2048,4096.512&d=512~64*64`, PHONE);
  await page.waitForSelector('table.lookups', { state: 'attached' }); // in a closed <details>
  // All the follow-up work of the price is done (modes, lookups, sweeps): nothing redraws below.
  await page.waitForFunction(() => performance.getEntriesByName('stepcalc:secondary').length > 0);
  const showAll = page.getByRole('button', { name: /^Show all \d+$/ });
  if (await showAll.count()) await showAll.click();
  for (const d of await page.locator('details').all()) await d.evaluate((el) => { el.open = true; });
  // What opening them brings in: the calibration panel, loaded on its first opening; then a frame.
  await page.locator('#calibrate-body [data-testid="calibrate-drop"]').waitFor();
  await settle(page);
  const wide = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    boxes: [...document.querySelectorAll('body *')].filter((el) => {
      const s = getComputedStyle(el);
      return /(auto|scroll)/.test(s.overflowX) && el.scrollWidth > el.clientWidth + 1 &&
        el.closest('.doc-body') === null;
    }).map((el) => el.className || el.tagName),
    cells: [...document.querySelectorAll('table.lookups td, table.lookups th')].filter((el) =>
      el.getBoundingClientRect().right > 391).length,
  }));
  assert.ok(wide.page <= 390, `the page is ${wide.page} px wide`);
  assert.deepEqual(wide.boxes, [], 'boxes that scroll sideways');
  assert.equal(wide.cells, 0, 'lookup cells beyond the screen');
  const mfu = page.locator('table.lookups td[data-label="MFU"]').first();
  assert.ok(await mfu.isVisible());
  await page.screenshot({ path: artifactPath('phone-lookups.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('at 390 px the number stays in sight in a bar under 10% of the screen', async () => {
  const page = await openPage(env.browser, env.base, PHONE);
  await page.waitForSelector('#model-preset');
  await page.evaluate(() => scrollTo(0, 2000));
  const bar = await page.locator('#sticky').boundingBox();
  assert.ok(bar && bar.y <= 1 && bar.height <= 0.1 * PHONE.height, `sticky bar ${JSON.stringify(bar)}`);
  assert.match(await page.locator('#sticky').textContent(), /^\d+(\.\d+)? (ms|µs) · llama-3\.1-8b-instruct on H100/);
  assert.match(await page.locator('#sticky').textContent(), new RegExp((await shownStepTime(page) / 1000).toFixed(1)));
  const card = await page.evaluate(() => getComputedStyle(document.querySelector('.result-card')).position);
  assert.notEqual(card, 'sticky', 'the whole result card does not stick');
  await page.screenshot({ path: artifactPath('phone-scrolled.png') });
  await page.close();
});

test('at 390 px the roofline\'s values table (measured mode) does not widen the page', async () => {
  const page = await openPage(env.browser, `${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured` +
    '&p=0.2048&d=512~64*64', PHONE);
  await page.locator('#roofline svg.roofline').waitFor();
  await page.locator('#roofline details.values summary').click();
  await page.locator('#roofline table.values-table').waitFor();
  await settle(page);
  const wide = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    table: Math.round(document.querySelector('#roofline table.values-table').getBoundingClientRect().right),
  }));
  assert.ok(wide.page <= 390, `the page is ${wide.page} px wide`);
  assert.ok(wide.table <= 390, `the table reaches ${wide.table} px`);
  assert.deepEqual(page.problems, []);
  await page.close();
});

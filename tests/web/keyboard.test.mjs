// SPDX-License-Identifier: Apache-2.0
// Keyboard and screen readers: 300 decode rows are one tab stop (an ARIA grid with a
// roving tabindex, arrow keys inside), the focus ring stands out (>= 3:1), and the
// step's rows stay in the page's flow (no scroll box inside the page).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, contrast, startForTests } from './helpers.mjs';

const env = startForTests();

const HASH = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=blis-v2&p=0.2048,0.512&d=100~10*300';


test('300 decode rows are one tab stop; arrow keys move between rows and cells', async () => {
  const page = await openPage(env.browser, `${env.base}${HASH}`);
  const grid = page.getByRole('grid', { name: 'Decode rows' });
  await grid.waitFor();
  // Show every row the page shows (all 300), then count what Tab can reach inside.
  while (await page.locator('#step-panel .rows').last().getByRole('button', { name: /^Show \d+ more$/ }).count()) {
    await page.locator('#step-panel .rows').last().getByRole('button', { name: /^Show \d+ more$/ }).click();
  }
  assert.equal(await grid.locator('tbody tr').count(), 300);
  const stops = await grid.evaluate((g) => [...g.querySelectorAll('input, button, [tabindex]')]
    .filter((el) => el.tabIndex >= 0 && !el.disabled).length);
  assert.equal(stops, 1, `${stops} tab stops in the decode grid`);
  assert.equal(await grid.getAttribute('aria-rowcount'), '301');

  // Tab into the grid lands on the first KV input; arrows move.
  await page.getByRole('grid', { name: 'Prefill rows' }).locator('input').first().focus();
  await page.keyboard.press('Tab'); // leaves the prefill grid (one stop) ...
  for (let i = 0; i < 10 &&
    !(await page.evaluate(() => document.activeElement.closest('[aria-label="Decode rows"]'))); i++) {
    await page.keyboard.press('Tab');
  }
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Decode 1 KV length');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Decode 3 KV length');
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Duplicate decode 3');
  await page.keyboard.press('Control+End');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Duplicate decode 300');
  // Tab leaves the grid at once, and coming back lands where the user was.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => !!document.activeElement.closest('[aria-label="Decode rows"]')), false);
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Duplicate decode 300');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the focus ring is >= 3:1 against the card in light and dark', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const page = await openPage(env.browser, `${env.base}${HASH}`, { width: 1280, height: 900 }, { colorScheme });
    await page.locator('#tp').focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const { outline, width, card } = await page.evaluate(() => {
      const s = getComputedStyle(document.activeElement);
      return { outline: s.outlineColor, width: parseFloat(s.outlineWidth),
        card: getComputedStyle(document.querySelector('.card')).backgroundColor };
    });
    assert.ok(width >= 2, `outline ${width}px`);
    assert.ok(contrast(outline, card) >= 3,
      `${colorScheme}: focus ring ${outline} on ${card} is ${contrast(outline, card).toFixed(2)}:1`);
    await page.close();
  }
});

test('the step rows are in the page flow: no scroll box inside the page', async () => {
  const page = await openPage(env.browser, `${env.base}${HASH}`, { width: 390, height: 844 });
  await page.getByRole('grid', { name: 'Decode rows' }).waitFor();
  const nested = await page.evaluate(() => [...document.querySelectorAll('#step-panel *')].filter((el) => {
    const s = getComputedStyle(el);
    return /(auto|scroll)/.test(s.overflowY) && el.scrollHeight > el.clientHeight + 1;
  }).map((el) => el.className || el.tagName));
  assert.deepEqual(nested, []);
  await page.close();
});

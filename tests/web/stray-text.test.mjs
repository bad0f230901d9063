// SPDX-License-Identifier: Apache-2.0
// No stray "null", "false" or "undefined" text: a list of optional children (a "Show
// more" button that is not needed, a second error line that is absent) leaves nothing
// behind (replaceChildren shows null and false as text; web/dom.js fill() skips them).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startForTests, openPage, openDetails } from './helpers.mjs';

const env = startForTests();
let dir;
before(() => { dir = mkdtempSync(path.join(tmpdir(), 'stepcalc-stray-')); });
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/** Text nodes of the page (outside scripts, styles and inputs) that are only null/false/undefined words. */
const strayText = (page) => page.evaluate(() => {
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement?.closest('script, style, textarea, pre, code')) continue;
    if (/^(?:\s*(?:null|false|undefined)\s*)+$/.test(n.textContent)) {
      found.push(`${n.parentElement?.tagName}.${n.parentElement?.className}: ${n.textContent}`);
    }
  }
  return found;
});

test('many prefill rows ("Show N more") and a bad calibration file leave no null/false text', async () => {
  const page = await openPage(env.browser, `${env.base}#v=1&m=llama-3.1-8b-instruct&tp=1&p=0.100*60&d=500*3`);
  await page.getByText(/Show \d+ more/).first().waitFor();
  assert.deepEqual(await strayText(page), []);
  await openDetails(page, '#calibrate');
  const bad = path.join(dir, 'bad.csv');
  writeFileSync(bad, 'model,tp\nllama-2-70b,four\n');
  await page.setInputFiles('#calibrate-file', bad);
  await page.locator('#calibrate [data-testid="error"]').waitFor();
  assert.deepEqual(await strayText(page), []);
  assert.deepEqual(page.problems, []);
  await page.close();
});

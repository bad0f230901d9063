// SPDX-License-Identifier: Apache-2.0
// The page names its documentation as links to the rendered pages (web/dist/docs/*.html,
// scripts/build-docs.mjs), never as plain "docs/X.md" text: the Serving panel's
// docs/SERVING.md, the footer's docs/PAGE.md, the corrected mode's switches, the Plan panel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDetails, openPage, startForTests } from './helpers.mjs';

const env = startForTests();

test('every documentation page the page names is a link to its rendered page, and each opens', async () => {
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=corrected&p=0.2048&d=512~64*64`);
  await page.locator('#serving-panel').scrollIntoViewIfNeeded();
  await page.getByTestId('ttft').waitFor();
  await openDetails(page, '#plan');
  await page.getByTestId('plan-status').waitFor({ state: 'attached' });
  // Every mention of a document in the page's text is inside a link.
  const plain = await page.evaluate(() => {
    const found = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (/\bdocs\/[A-Z][A-Z-]*\.md\b/.test(n.textContent) && !n.parentElement.closest('a')) {
        found.push(n.textContent.trim().slice(0, 80));
      }
    }
    return found;
  });
  assert.deepEqual(plain, []);
  const links = await page.locator('a[href*="web/dist/docs/"]').evaluateAll((as) => as.map((a) => a.href));
  for (const name of ['SERVING', 'PAGE', 'CORRECTED-MODE', 'PLAN']) {
    assert.ok(links.some((href) => href.endsWith(`/web/dist/docs/${name}.html`)), `${name} linked`);
  }
  // The Serving panel's link opens the rendered SERVING.md, and every other one a page.
  const serving = await page.getByRole('link', { name: 'how it is simulated' }).getAttribute('href');
  const response = await page.request.get(new URL(serving, page.url()).href);
  assert.equal(response.status(), 200);
  assert.match(await response.text(), /<title>Serving estimate: memory, scheduling, latency, throughput, cost/);
  for (const href of new Set(links)) assert.equal((await page.request.get(href)).status(), 200, href);
  assert.deepEqual(page.problems, []);
  await page.close();
});

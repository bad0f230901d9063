// SPDX-License-Identifier: Apache-2.0
// The page names its documentation as links to the rendered pages (web/dist/docs/*.html,
// scripts/build-docs.mjs), never as plain "docs/X.md" text: the Serving panel's
// docs/SERVING.md, the footer's docs/PAGE.md, the corrected mode's switches, the Plan panel, the
// mode's accuracy line, and the core's own words: a warning (the table-outlier warning names
// docs/KERNELS.md) and an error (a format not measured on the GPU) that name a document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openDetails, openPage, root, startForTests } from './helpers.mjs';

const env = startForTests();

/** The page's text nodes that name a docs/*.md outside a link. */
const plainMentions = (page) => page.evaluate(() => {
  const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (/\bdocs\/[A-Z][A-Z-]*\.md\b/.test(n.textContent) && !n.parentElement.closest('a')) {
      found.push(n.textContent.trim().slice(0, 80));
    }
  }
  return found;
});

test('every documentation page the page names is a link to its rendered page, and each opens', async () => {
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=corrected&p=0.2048&d=512~64*64`);
  await page.locator('#serving-panel').scrollIntoViewIfNeeded();
  await page.getByTestId('ttft').waitFor();
  await openDetails(page, '#plan');
  await page.getByTestId('plan-status').waitFor({ state: 'attached' });
  // Every mention of a document in the page's text is inside a link.
  assert.deepEqual(await plainMentions(page), []);
  const links = await page.locator('a[href*="web/dist/docs/"]').evaluateAll((as) => as.map((a) => a.href));
  for (const name of ['SERVING', 'PAGE', 'CORRECTED-MODE', 'PLAN', 'ACCURACY']) {
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

test('a warning or an error of the core that names a document links it', async () => {
  // DeepSeek-V3 at TP 8 on H100: the FP8 table is slower than BF16 for q_a_proj, and the
  // warning says so, naming docs/KERNELS.md.
  const page = await openPage(env.browser, `${env.base}#v=1&m=deepseek-v3&g=H100&tp=8&mode=measured`);
  const warning = page.locator('ul.warnings li', { hasText: 'a table outlier' }).first();
  await warning.waitFor();
  assert.equal(await warning.getAttribute('title'), 'table_outlier');
  const link = warning.getByRole('link', { name: 'docs/KERNELS.md' });
  assert.equal(await link.getAttribute('href'), 'web/dist/docs/KERNELS.html');
  assert.equal((await page.request.get(new URL('web/dist/docs/KERNELS.html', page.url()).href)).status(), 200);
  assert.deepEqual(await plainMentions(page), []);
  assert.deepEqual(page.problems, []);
  await page.close();

  // NVIDIA's NVFP4 Kimi-K2.5 on H100 (no NVFP4 tables): the core's refusal names docs/KERNELS.md.
  const file = path.join(root, 'data/silicon/model_configs/nvidia--Kimi-K2.5-NVFP4_config.json');
  const request = { model: JSON.parse(readFileSync(file, 'utf8')), gpu: 'H100', tp: 8, mode: 'measured',
    step: { decode_requests: [{ progress_index: 9 }] } };
  const refused = await env.browser.newPage();
  await refused.goto(`${env.base}#json=${encodeURIComponent(JSON.stringify(request))}`);
  const error = refused.locator('[data-testid="error"]', { hasText: 'is not measured on H100' }).first();
  await error.waitFor();
  assert.equal(await error.getByRole('link', { name: 'docs/KERNELS.md' }).getAttribute('href'),
    'web/dist/docs/KERNELS.html');
  assert.deepEqual(await plainMentions(refused), []);
  await refused.close();
});

// SPDX-License-Identifier: Apache-2.0
// A cold load reads the core's .wasm and each kernel pack once: the serving and plan workers
// are handed the page's compiled module and the packs it read (calc.forWorker()), instead of
// fetching and compiling them again (the summary strip's worker once doubled the cold load).
// docs/accuracy.json, which the headline and the modes section both show, is read once too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startForTests, openDetails, MEASURED_NUMBER } from './helpers.mjs';

const env = startForTests();

test('the .wasm and every kernel pack are fetched once, the workers\' included', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1366, height: 800 } });
  const fetched = [];
  // Requests of the page and of its workers (a context sees both).
  page.context().on('request', (r) => fetched.push(new URL(r.url()).pathname));
  page.on('worker', () => fetched.push('(worker)'));
  await page.goto(`${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&p=0.2048&d=512~64*64`);
  await page.waitForSelector('[data-testid="step-time-us"]');
  await page.waitForFunction(() => document.querySelector('#summary')?.dataset.serving === 'done', null,
    { timeout: 60000 });
  assert.ok(fetched.includes('(worker)'), 'the serving worker started');
  const count = (p) => fetched.filter((f) => f === p).length;
  assert.equal(count('/wasm/dist/stepcalc-core.wasm'), 1, fetched.join('\n'));
  const packs = fetched.filter((f) => f.startsWith('/wasm/dist/kernels/'));
  assert.ok(packs.length > 0, 'measured mode read kernel packs');
  assert.deepEqual(packs.filter((p, i) => packs.indexOf(p) !== i), [], 'no pack read twice');
  await page.waitForSelector('[data-testid="step-accuracy"]');
  await page.waitForFunction(() => /Most accurate/.test(document.querySelector('[data-testid="accuracy"]')
    ?.textContent ?? ''));
  assert.equal(count('/docs/accuracy.json'), 1, 'docs/accuracy.json read once');
  // The Plan panel's worker: no second .wasm of the core either.
  await openDetails(page, '#plan');
  await page.waitForSelector('#plan-body [data-testid]', { timeout: 30000 });
  assert.equal(count('/wasm/dist/stepcalc-core.wasm'), 1);
  await page.close();
});

test('index.html preloads exactly the kernel packs the default step reads, and each is fetched once', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1366, height: 800 } });
  const fetched = [];
  page.context().on('request', (r) => fetched.push(new URL(r.url()).pathname));
  await page.goto(env.base);
  await page.waitForFunction((sel) => /^\d+$/.test(document.querySelector(sel)?.getAttribute('value') ?? ''),
    MEASURED_NUMBER);
  const preloaded = await page.locator('link[rel="preload"][href*="kernels/"]').evaluateAll((links) =>
    links.map((l) => new URL(l.href).pathname));
  const packs = fetched.filter((f) => f.startsWith('/wasm/dist/kernels/'));
  assert.ok(preloaded.length > 0, 'no pack is preloaded');
  assert.deepEqual([...preloaded].sort(), [...new Set(packs)].sort(), 'the packs preloaded are the packs read');
  assert.equal(packs.length, preloaded.length, `each once: ${packs.join(', ')}`);
  await page.close();
});

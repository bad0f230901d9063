// SPDX-License-Identifier: Apache-2.0
// The module in a browser module Worker: same integers as the CLI, errors as values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, startForTests } from './helpers.mjs';

const env = startForTests();

test('the loader prices in a module Worker exactly as the reference', async () => {
  const cases = JSON.parse(readFileSync(path.join(root, 'tests/data/conformance-cases.json'), 'utf8'));
  const page = await env.browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${env.base}tests/web/fixtures/worker.html`);
  await page.waitForFunction(() => typeof window.priceInWorker === 'function');
  for (const c of cases.filter((_, i) => i % 8 === 0)) {
    const reply = await page.evaluate((request) => window.priceInWorker(request), c);
    assert.ok(reply.ok, c.id);
    assert.equal(reply.result.step_time_us, c.expected.step_time_us, c.id);
  }
  const bad = await page.evaluate(() => window.priceInWorker({ model: 'llama-2-7b-hf', tp: 0, step: {} }));
  assert.deepEqual(bad, { ok: false, isStepCalcError: true, code: 'invalid_value', path: 'tp' });
  assert.deepEqual(problems, []);
  await page.close();
});

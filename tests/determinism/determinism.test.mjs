// SPDX-License-Identifier: Apache-2.0
// Determinism: every conformance case gives the same integer step time (and the same
// unrounded total, bit for bit) natively, in Node through the loader, and in Chromium
// through the loader imported in a page, in both modes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startForTests } from '../web/helpers.mjs';
import { load } from '../../wasm/stepcalc.js';

const casesPath = fileURLToPath(new URL('../data/conformance-cases.json', import.meta.url));
const cli = fileURLToPath(new URL('../../build/stepcalc', import.meta.url));
const cases = JSON.parse(readFileSync(casesPath, 'utf8'));
const MODES = ['blis-v2', 'corrected'];

/** [step_time_us, total_us_before_rounding] of each result, in order. */
const numbers = (results) => results.map((r) => {
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return [r.step_time_us, r.breakdown.total_us_before_rounding];
});

function native(mode) {
  return numbers(JSON.parse(execFileSync(cli, ['price', '--mode', mode, casesPath], { maxBuffer: 1 << 28 })));
}

async function node(mode) {
  const calc = await load();
  return numbers(calc.priceAll(cases, { mode }));
}

const env = startForTests();

async function chromiumResults(mode) {
  const page = await env.browser.newPage();
  try {
    // Any same-origin document will do (this one is the server's 404 text): the
    // loader is imported by URL, as a page would.
    await page.goto(`${env.base}determinism-blank`);
    const results = await page.evaluate(async ({ cases, mode }) => {
      const { load } = await import('/wasm/stepcalc.js');
      const calc = await load();
      return cases.map((c) => calc.price({ ...c, mode }));
    }, { cases, mode });
    return numbers(results);
  } finally {
    await page.close();
  }
}

test('the conformance cases are all here', () => {
  assert.equal(cases.length, 160);
});

for (const mode of MODES) {
  test(`${mode}: native, Node and Chromium give identical numbers for every conformance case`, async () => {
    const fromNative = native(mode);
    const fromNode = await node(mode);
    const fromChromium = await chromiumResults(mode);
    assert.equal(fromNative.length, cases.length);
    cases.forEach((c, i) => {
      assert.deepEqual(fromNode[i], fromNative[i], `Node differs from native for ${c.id}`);
      assert.deepEqual(fromChromium[i], fromNative[i], `Chromium differs from native for ${c.id}`);
      if (mode === 'blis-v2') assert.equal(fromNative[i][0], c.expected.step_time_us, `reference differs for ${c.id}`);
    });
  });
}

// SPDX-License-Identifier: Apache-2.0
// A/B comparison (pin A, change anything, both priced with the difference per phase
// and per operator, A in the share link) and exports (CSV of the breakdown, lookups,
// sweeps and comparison; each chart as SVG and PNG), checked by their content.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { openPage, cliStepTime, pageRequest, root, startForTests, settle } from './helpers.mjs';

const env = startForTests();

// The reference model's bars (per phase, compute and memory); the measured mode's
// grouping of operators is checked in measured-page.test.mjs.
const BLIS = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=blis-v2&p=0.2048&d=512~64*64';

/** Clicks `locator` and returns the downloaded file's bytes and name. */
async function downloaded(page, locator) {
  const [file] = await Promise.all([page.waitForEvent('download'), locator.click()]);
  return { name: file.suggestedFilename(), bytes: readFileSync(await file.path()) };
}
/** CSV text -> rows of fields, without the `#` lines above the header (the files quote only plain fields here). */
const parseCsv = (text) => text.trimEnd().split('\r\n').filter((line) => !/^"?#/.test(line))
  .map((line) => line.split(','));

test('pin A, change the TP: both priced as the CLI prices them, the difference per phase, A in the link', async () => {
  const page = await openPage(env.browser, `${env.base}${BLIS}`);
  const requestA = await pageRequest(page);
  await page.getByTestId('pin-a').click();
  await page.fill('#tp', '2');
  await page.waitForFunction(() =>
    /TP 1 → 2/.test(document.querySelector('[data-testid="compare-diff"]')?.textContent));
  await settle(page);
  const requestB = await pageRequest(page);
  const table = page.getByTestId('compare-table');
  const cells = await table.locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  const step = cells.find((r) => r[0] === 'Step');
  const [a, b] = [cliStepTime(requestA), cliStepTime(requestB)];
  assert.notEqual(a, b);
  assert.ok(step[1].startsWith((a / 1000).toFixed(1)), `A ${step[1]} vs CLI ${a} µs`);
  assert.ok(step[2].startsWith((b / 1000).toFixed(1)), `B ${step[2]} vs CLI ${b} µs`);
  assert.match(step[3], b < a ? /^−/ : /^\+/);
  for (const phase of ['Prefill compute', 'Decode compute', 'CPU overhead', 'Prefill memory']) {
    assert.ok(cells.some((r) => r[0] === phase), `no ${phase} row`);
  }
  assert.ok(cells.some((r) => r[0] === 'attention'), 'parts of a phase are compared too');
  assert.equal(Number(await page.getAttribute('[data-testid="step-time-us"]', 'value')), b, 'B is the step shown');
  // The link holds A; opened elsewhere it shows the same comparison.
  const link = page.url();
  assert.match(link, /&a=v%3D1%26m%3Dllama-3\.1-8b-instruct%26g%3DH100%26tp%3D1%26mode%3Dblis-v2/);
  const again = await openPage(env.browser, link);
  await again.getByTestId('compare-table').waitFor();
  assert.deepEqual(await again.getByTestId('compare-table').locator('tbody tr').first()
    .evaluate((tr) => [...tr.children].map((c) => c.textContent)), step);
  // The comparison exports as CSV with µs figures.
  const button = again.locator('[aria-label="Export the A/B comparison"] [data-export="csv"]');
  const csv = parseCsv((await downloaded(again, button)).bytes.toString());
  assert.deepEqual(csv[0], ['bar', 'part', 'a_us', 'b_us', 'b_minus_a_us']);
  assert.deepEqual(csv[1].slice(0, 4).map((v, i) => (i < 2 ? v : Number(v))), ['Step', 'step time', a, b]);
  await again.getByTestId('unpin-a').click();
  await again.waitForFunction(() => !/&a=/.test(location.hash));
  assert.equal(await again.locator('#compare-section').isVisible(), false);
  assert.deepEqual([...page.problems, ...again.problems], []);
  await page.close();
  await again.close();
});

test('a bad pinned A in a link is an error that names it', async () => {
  const page = await env.browser.newPage();
  const pinned = encodeURIComponent('v=1&m=llama-3.1-8b-instruct&tp=0&d=5');
  await page.goto(`${env.base}#v=1&m=llama-3.1-8b-instruct&tp=1&p=0.2048&d=100&a=${pinned}`);
  await page.waitForSelector('#link-error [data-testid="error"]');
  assert.match(await page.textContent('#link-error'), /pinned A cannot be priced: TP degree must be at least 1/);
  await page.close();
});

test('CSV exports of the breakdown, the lookup table and a sweep hold the priced values', async () => {
  const page = await openPage(env.browser, `${env.base}${BLIS}`);
  const request = await pageRequest(page);
  const us = cliStepTime(request);
  await page.waitForFunction(() => document.querySelectorAll('#sweeps svg.line').length === 3 &&
    document.querySelector('table.lookups'));

  const breakdown = await downloaded(page, page.locator('[aria-label="Export the breakdown"] [data-export="csv"]'));
  assert.equal(breakdown.name, 'stepcalc-llama-3.1-8b-instruct-H100-tp1-breakdown.csv');
  const rows = parseCsv(breakdown.bytes.toString());
  assert.deepEqual(rows[0], ['bar', 'part', 'time_us', 'share_of_bar', 'binds']);
  assert.equal(rows[1][0], 'Step');
  assert.ok(Math.abs(Number(rows[1][2]) - us) < 1e-6, `${rows[1][2]} vs ${us}`);
  assert.ok(rows.some((r) => r[0] === 'Prefill compute' && r[1] === 'attention' && Number(r[2]) > 0));

  await page.click('details.lookup-details summary'); // closed until opened
  const lookups = parseCsv((await downloaded(page,
    page.locator('[aria-label="Export the lookup table"] [data-export="csv"]'))).bytes.toString()
    .replace(/"[^"]*"/g, (q) => q.replace(/,/g, ';')));
  assert.deepEqual(lookups[0], ['where', 'shape', 'mfu', 'time_us', 'how', 'provenance', 'note']);
  const shown = Number((await page.locator('#details summary h2').nth(1).textContent()).match(/\((\d+)\)/)[1]);
  assert.equal(lookups.length - 1, shown, 'every lookup, not only the rows shown');

  const sweep = parseCsv((await downloaded(page, page.locator('.sweep').first().locator('[data-export="csv"]')))
    .bytes.toString());
  assert.deepEqual(sweep[0], ['prefill_tokens', 'step_time_us', 'bound', 'current']);
  const current = sweep.find((r) => r[3] === 'yes');
  assert.deepEqual([Number(current[0]), Number(current[1])], [2048, us]);
  assert.ok(sweep.length >= 10);
  await page.close();
});

test('charts export as standalone SVG (colours written in) and as PNG', async () => {
  const page = await openPage(env.browser, env.base);
  const svg = (await downloaded(page, page.locator('[aria-label="Export the breakdown"] [data-export="svg"]')))
    .bytes.toString();
  assert.match(svg, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.doesNotMatch(svg, /class="/, 'no dependence on the page\'s stylesheet');
  const fills = new Set([...svg.matchAll(/<rect [^>]*fill="(rgb\([^)]*\))"/g)].map((m) => m[1]));
  assert.ok(fills.size >= 8, `bar colours: ${[...fills]}`);
  assert.equal((svg.match(/<rect /g) || []).length - 1, await page.locator('svg.breakdown rect').count());
  const sweepSvg = (await downloaded(page, page.locator('.sweep').nth(1).locator('[data-export="svg"]')))
    .bytes.toString();
  assert.match(sweepSvg, /Step time \((ms|µs)\)/);
  const png = await downloaded(page, page.locator('.sweep').nth(1).locator('[data-export="png"]'));
  assert.equal(png.name, 'stepcalc-llama-3.1-8b-instruct-H100-tp1-sweep-decode-batch.png');
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.bytes.length > 2000);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('every export says what it is of: title, model, GPU, TP, mode, step, date, version and link; a name to match',
  async () => {
    const link = `${env.base}#v=1&m=llama-3.1-70b-instruct&g=H100&tp=4&mode=blis-v2&p=0.2048&d=512~64*64`;
    const page = await openPage(env.browser, link);
    await page.waitForFunction(() => document.querySelectorAll('#sweeps svg.line').length === 3);
    const today = new Date().toISOString().slice(0, 10);
    const version = JSON.parse(execFileSync(path.join(root, 'build/stepcalc'), ['catalogue']).toString()).version;

    const breakdown = await downloaded(page, page.locator('[aria-label="Export the breakdown"] [data-export="csv"]'));
    assert.equal(breakdown.name, 'stepcalc-llama-3.1-70b-instruct-H100-tp4-breakdown.csv');
    const lines = breakdown.bytes.toString().split('\r\n');
    const about = lines.slice(0, lines.findIndex((l) => !l.startsWith('#')));
    assert.equal(about[0], '# stepcalc: where the time goes');
    for (const want of [`# stepcalc version: ${version}`, '# model: llama-3.1-70b-instruct', '# GPU: H100', '# TP: 4',
      '# mode: blis-v2', '# step: 1 prefill row (2048 new tokens); 64 decode rows']) {
      assert.ok(about.includes(want), `${want} in ${about.join(' | ')}`);
    }
    assert.ok(about.some((l) => l.startsWith(`# exported: ${today} `)), about.join(' | '));
    assert.ok(about.includes(`# link: ${page.url()}`), 'the link that reproduces it');
    assert.equal(lines[about.length], 'bar,part,time_us,share_of_bar,binds', 'the header right under the context');
    // Numbers to 6 significant digits, not 17.
    const numbers = parseCsv(breakdown.bytes.toString()).slice(1).flatMap((r) => r.slice(2, 4)).filter(Boolean);
    assert.ok(numbers.length > 10);
    for (const v of numbers) {
      assert.ok(v.replace(/^-?0?\.?0*/, '').replace('.', '').length <= 6 || Number.isInteger(Number(v)), v);
    }

    // The SVG: the title and context above the chart, in its <title> and <desc> too; every
    // label inside the picture (a tick label at the last tick is not cut off).
    const svgFile = await downloaded(page, page.locator('.sweep').first().locator('[data-export="svg"]'));
    assert.equal(svgFile.name, 'stepcalc-llama-3.1-70b-instruct-H100-tp4-sweep-prefill-tokens.svg');
    const svg = svgFile.bytes.toString();
    assert.match(svg, /<title>stepcalc: sweep: step time vs\. prefill length<\/title>/);
    assert.match(svg, /<desc>[^<]*model: llama-3\.1-70b-instruct\nGPU: H100\nTP: 4\nmode: blis-v2/);
    const shown = await page.evaluate((text) => {
      const box = document.createElement('div');
      box.innerHTML = text.replace(/^<\?xml[^>]*>/, ''); // a test's own file, shown to measure it
      document.body.append(box);
      const out = box.querySelector('svg');
      const edge = out.getBoundingClientRect();
      const texts = [...out.querySelectorAll('text')].map((t) => {
        const r = t.getBoundingClientRect();
        return { text: t.textContent, inside: r.left >= edge.left - 0.5 && r.right <= edge.right + 0.5 &&
          r.top >= edge.top - 0.5 && r.bottom <= edge.bottom + 0.5, about: t.dataset.about ?? '' };
      });
      box.remove();
      return texts;
    }, svg);
    assert.deepEqual(shown.filter((t) => !t.inside).map((t) => t.text), [], 'labels cut at the picture\'s edges');
    assert.equal(shown.find((t) => t.about === 'title')?.text, 'stepcalc: sweep: step time vs. prefill length');
    const context = shown.filter((t) => t.about === 'context').map((t) => t.text).join(' · ');
    for (const want of ['model llama-3.1-70b-instruct', 'GPU H100', 'TP 4', 'mode blis-v2', `exported ${today}`,
      `stepcalc version ${version}`]) assert.ok(context.includes(want), `${want} in ${context}`);
    const png = await downloaded(page, page.locator('.sweep').first().locator('[data-export="png"]'));
    assert.equal(png.name, 'stepcalc-llama-3.1-70b-instruct-H100-tp4-sweep-prefill-tokens.png');
    const [pngWidth, pngHeight] = [png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)];
    const [svgWidth, svgHeight] = /<svg [^>]*width="(\d+)" height="(\d+)"/.exec(svg).slice(1).map(Number);
    assert.deepEqual([pngWidth, pngHeight], [svgWidth * 2, svgHeight * 2], 'the PNG is the SVG with its header');
    assert.deepEqual(page.problems, []);
    await page.close();
  });

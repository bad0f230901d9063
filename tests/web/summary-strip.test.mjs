// SPDX-License-Identifier: Apache-2.0
// The summary strip under the title (issue 26, "The answer at a glance"): at 1366x800 the
// step time, TTFT and TPOT (equal to `build/stepcalc serve` of the Serving panel's workload,
// with the ledger's error), memory fit and cost are in the first viewport without scrolling;
// the Serving panel shows the same simulation rather than running it again; a price typed
// there gives the strip its cost; a model that does not fit says so beside the headline and
// in the strip; an overloaded workload says so; a 390 px phone does not scroll sideways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { artifactPath, openPage, root, startForTests } from './helpers.mjs';

const env = startForTests();

const DESKTOP = { width: 1366, height: 800 };
const PHONE = { width: 390, height: 844 };

/** build/stepcalc serve of `request`. */
const cliServe = (request) =>
  JSON.parse(execFileSync(path.join(root, 'build/stepcalc'), ['serve', '-'], { input: JSON.stringify(request) })
  .toString());

/** The page's latency format (web/serving-panel.js). */
const ms = (x) => (x >= 100 ? `${Math.round(x).toLocaleString('en-US')} ms` : `${x.toFixed(x >= 10 ? 1 : 2)} ms`);
/** The ledger's words beside a serving figure (validationWords in web/serving-panel.js). */
const ledger = (v, which) => (v.subset === null ? 'no measured runs like this'
  : `±${v[`${which}_mape`].toFixed(0)}% on ${v.runs} measured runs like this` + ((b) => (b === 0 ? ''
    : ` (estimated ${Math.abs(b)}% ${b < 0 ? 'low' : 'high'} there)`))(Math.round(v[`${which}_bias`])));

/** Waits until the strip's serving figures are those of a finished simulation; returns its state. */
async function stripDone(page, timeout = 60000) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#summary').dataset.serving),
    null, { timeout });
  return page.locator('#summary').getAttribute('data-serving');
}

const figure = async (page, id, key = 'value') => Number(await page.getByTestId(`summary-${id}`)
  .getAttribute(`data-${key}`));

/**
 * Records every job the page posts to a serving worker ({request (null: only the curve), curve
 * points}) and when the first serving worker was started.
 */
const recordJobs = () => {
  window.servingJobs = [];
  const Base = window.Worker;
  window.Worker = class extends Base {
    constructor(url, options) {
      if (/serving-worker/.test(String(url))) window.servingWorkerAt ??= performance.now();
      super(url, options);
    }
  };
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message && 'curve' in message) {
      window.servingJobs.push({ request: message.request && JSON.stringify(message.request),
        curve: message.curve.length });
    }
    return post.call(this, message, ...rest);
  };
};

test('at 1366x800 the strip shows the step time, TTFT and TPOT of `stepcalc serve`, memory and cost unscrolled',
  async () => {
  const page = await env.browser.newPage({ viewport: DESKTOP });
  await page.addInitScript(recordJobs);
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(env.base);
  await page.getByTestId('step-time-us').waitFor();
  assert.equal(await stripDone(page), 'done');
  // The simulation started after the first number was on screen, so it did not delay it.
  const [first, worker] = await page.evaluate(() =>
    [performance.getEntriesByName('stepcalc:first-result')[0]?.startTime, window.servingWorkerAt]);
  assert.ok(first > 0 && worker > first, `first number at ${first} ms, the serving worker started at ${worker} ms`);
  // The Serving panel's default workload on the page's default model, GPU, TP and mode.
  const request = { model: 'llama-3.1-8b-instruct', gpu: 'H100', tp: 1, mode: 'measured',
    workload: { input_tokens: 1024, output_tokens: 128, concurrency: 8 } };
  const cli = cliServe(request);
  for (const id of ['ttft', 'tpot']) {
    assert.equal(await figure(page, id), cli[`${id}_ms`].mean, `${id} mean`);
    assert.equal(await figure(page, id, 'p90'), cli[`${id}_ms`].p90, `${id} p90`);
    const text = await page.getByTestId(`summary-${id}`).textContent();
    assert.ok(text.includes(ms(cli[`${id}_ms`].mean)), `${id}: ${text}`);
    assert.ok(text.includes(`p90 ${ms(cli[`${id}_ms`].p90)}`), `${id}: ${text}`);
    assert.ok(text.includes(ledger(cli.validation, id)), `${id}: ${text} (the ledger's error)`);
  }
  // Nothing scrolled, and every figure of the strip inside the first viewport.
  assert.equal(await page.evaluate(() => scrollY), 0);
  for (const id of ['summary-ttft', 'summary-tpot', 'summary-memory', 'summary-cost', 'summary-what']) {
    const box = await page.getByTestId(id).boundingBox();
    assert.ok(box && box.y >= 0 && box.y + box.height <= DESKTOP.height, `${id} at ${JSON.stringify(box)}`);
  }
  const step = await page.getByTestId('summary-step-time').boundingBox();
  assert.ok(step.y + step.height <= DESKTOP.height, 'the step time is in the first viewport');
  assert.equal(await page.getByTestId('summary-step-time').textContent(),
    await page.getByTestId('step-time-us').textContent());
  assert.match(await page.getByTestId('summary-what').textContent(),
    /^A step is one vLLM engine iteration: the prefill chunks and decodes batched\s+together\.$/);
  assert.match(await page.getByTestId('summary-memory').textContent(),
    new RegExp(`Fits: ${cli.memory.kv_cache_tokens.toLocaleString('en-US')} tokens of KV cache per GPU`));
  assert.match(await page.locator('#sum-workload').textContent(),
    /^TTFT, TPOT and cost for 1,024 input and 128 output tokens per request at 8 concurrent clients, 80 requests/);
  await page.screenshot({ path: artifactPath('summary-strip-desktop.png') });

  // The Serving panel, scrolled to, shows the strip's simulation: the request was posted once,
  // then only its curve (request null).
  await page.locator('#serving-panel').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="serve-curve"] circle.point').length >= 9 &&
    document.querySelector('[data-testid="serve-status"]').textContent === 'Done.', null, { timeout: 60000 });
  assert.equal(Number(await page.getByTestId('ttft').getAttribute('data-value')), cli.ttft_ms.mean);
  const jobs = await page.evaluate(() => window.servingJobs);
  assert.deepEqual(jobs.map((j) => j.request && JSON.parse(j.request)), [request, null],
    `jobs posted: ${JSON.stringify(jobs)}`);
  assert.ok(jobs[1].curve >= 9, 'the second job is the curve');

  // No price: the strip points to where one is set; following it and typing one gives the cost.
  const pointer = page.getByTestId('summary-set-price');
  await page.evaluate(() => scrollTo(0, 0));
  await pointer.click();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'serve-usd');
  await page.keyboard.type('2.5');
  const priced = cliServe({ ...request, gpu_hour_usd: 2.5 });
  await page.waitForFunction((v) =>
    Number(document.querySelector('[data-testid="summary-cost"]').dataset.value) === v,
  priced.cost.usd_per_million_output_tokens, { timeout: 60000 });
  assert.match(await page.getByTestId('summary-cost').textContent(),
    new RegExp(`\\$${priced.cost.usd_per_million_output_tokens.toFixed(2)}per million output tokens at \\$2\\.50`));
  assert.deepEqual(problems, []);
  await page.close();
});

test('a model that does not fit says so beside the headline and in the strip, in words', async () => {
  // The issue's case: GLM-5.2 FP8 at TP 1 on one H100.
  const page = await openPage(env.browser, `${env.base}#v=1&m=glm-5.2-fp8&g=H100&tp=1&mode=measured`, DESKTOP);
  const beside = page.getByTestId('headline-no-fit');
  assert.equal(await beside.textContent(), 'does not fit at TP 1 on H100');
  // On the number's line, right of it.
  const [number, note] = await Promise.all([page.getByTestId('step-time-us').boundingBox(), beside.boundingBox()]);
  assert.ok(note.x > number.x && note.y < number.y + number.height && note.y + note.height > number.y,
    `the note at ${JSON.stringify(note)}, the number at ${JSON.stringify(number)}`);
  assert.equal(await page.getByTestId('summary-no-fit').textContent(), 'does not fit at TP 1 on H100');
  const memory = await page.getByTestId('summary-memory').textContent();
  assert.match(memory, /Does not fit at TP 1: weights [\d,.]+ GiB > [\d,.]+ GiB usable per H100/);
  const [weights, usable] = memory.match(/[\d,.]+(?= GiB)/g).map((x) => Number(x.replace(/,/g, '')));
  assert.ok(weights > usable, memory);
  assert.equal(await page.getByTestId('summary-memory').getAttribute('data-fits'), 'false');
  // The simulation cannot serve it: TTFT and TPOT say why instead of a number.
  assert.equal(await stripDone(page), 'error');
  for (const id of ['ttft', 'tpot']) {
    assert.match(await page.getByTestId(`summary-${id}`).textContent(),
      /—not served: the model does not fit$/);
    assert.equal(await page.getByTestId(`summary-${id}`).getAttribute('data-value'), null);
  }
  for (const id of ['summary-no-fit', 'summary-memory', 'summary-ttft']) {
    const box = await page.getByTestId(id).boundingBox();
    assert.ok(box.y + box.height <= DESKTOP.height, `${id} in the first viewport`);
  }
  await page.screenshot({ path: artifactPath('summary-strip-no-fit.png') });
  // A model that fits: the words go, and the strip shows serving figures again.
  await page.evaluate(() => { location.hash = location.hash.replace('glm-5.2-fp8', 'llama-3.1-8b-instruct'); });
  await page.waitForFunction(() => !document.querySelector('[data-testid="headline-no-fit"]'));
  assert.equal(await page.getByTestId('summary-no-fit').count(), 0);
  assert.match(await page.getByTestId('summary-memory').textContent(), /^Memory per GPUFits: [\d,]+ tokens/);
  // The strip follows the edit with a simulation of the new request.
  const cli = cliServe({ model: 'llama-3.1-8b-instruct', gpu: 'H100', tp: 1, mode: 'measured',
    workload: { input_tokens: 1024, output_tokens: 128, concurrency: 8 } });
  await page.waitForFunction((v) => document.querySelector('#summary').dataset.serving === 'done' &&
    Number(document.querySelector('[data-testid="summary-tpot"]').dataset.value) === v, cli.tpot_ms.mean,
  { timeout: 60000 });
  assert.equal(await figure(page, 'ttft'), cli.ttft_ms.mean);
  // A field in error leaves the last good figures on screen, dimmed like the result card's.
  await page.fill('#tp', '0');
  await page.waitForFunction(() => document.querySelector('#summary').classList.contains('stale'));
  await page.fill('#tp', '1');
  await page.waitForFunction(() => !document.querySelector('#summary').classList.contains('stale'));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the strip\'s memory fit is that of the Serving panel\'s engine settings, as its memory bar\'s', async () => {
  // GPU memory utilization 0.5 from the link: half the KV cache of vLLM's default (0.9).
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&sv=1024_128_c8_n0_u0_g0.5`, DESKTOP);
  const price = (util) => JSON.parse(execFileSync(path.join(root, 'build/stepcalc'), ['price', '-'], {
    input: JSON.stringify({ model: 'llama-3.1-8b-instruct', gpu: 'H100', tp: 1, mode: 'measured', step: {},
      ...(util ? { engine: { gpu_memory_utilization: util } } : {}) }),
  }).toString()).memory;
  const [half, plain] = [price(0.5), price(null)];
  assert.ok(half.fits && half.kv_cache_tokens < plain.kv_cache_tokens);
  const tokens = (m) => `Fits: ${m.kv_cache_tokens.toLocaleString('en-US')} tokens of KV cache per GPU`;
  await page.waitForFunction((words) => document.querySelector('[data-testid="summary-memory"]').textContent
    .includes(words), tokens(half));
  assert.equal(await stripDone(page), 'done');
  assert.match(await page.getByTestId('summary-memory').textContent(), new RegExp(tokens(half)));
  // 0.2 typed in the panel: the weights no longer leave a KV cache. The strip says so, beside
  // the step time too, as the panel's memory bar does.
  const low = price(0.2);
  assert.equal(low.fits, false);
  await page.locator('#serving-panel').scrollIntoViewIfNeeded();
  await page.fill('#serve-util', '0.2');
  await page.waitForFunction(() => document.querySelector('#sum-memory').dataset.fits === 'false');
  assert.match(await page.getByTestId('summary-memory').textContent(), /Does not fit at TP 1: weights [\d.]+ GiB/);
  assert.equal(await page.getByTestId('summary-no-fit').textContent(), 'does not fit at TP 1 on H100');
  await page.waitForFunction(() => /does not fit/i.test(document.querySelector('[data-testid="memory-fits"]')
    ?.textContent ?? ''));
  assert.equal(await stripDone(page), 'error');
  assert.match(await page.getByTestId('summary-ttft').textContent(), /not served: the model does not fit$/);
  // Blank again: vLLM's default, and the strip with it.
  await page.fill('#serve-util', '');
  await page.waitForFunction((words) => document.querySelector('[data-testid="summary-memory"]').textContent
    .includes(words), tokens(plain));
  assert.equal(await page.getByTestId('summary-no-fit').count(), 0);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the ledger\'s error beside TTFT and TPOT says the runs it leaves out', async () => {
  // gpt-oss-120b on four H100s: its subset's runs that measured fewer requests in flight than
  // clients are not in the figures beside the estimate, and the strip says how many.
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=gpt-oss-120b&g=H100&tp=4&mode=measured&sv=256_16_c4_n0_u0`, DESKTOP);
  const v = cliServe({ model: 'gpt-oss-120b', gpu: 'H100', tp: 4, mode: 'measured',
    workload: { input_tokens: 256, output_tokens: 16, concurrency: 4 } }).validation;
  assert.equal(v.subset, 'openai/gpt-oss-120b | H100 | mxfp4 | TP4');
  assert.ok(v.runs_left_out > 0);
  assert.equal(await stripDone(page, 120000), 'done');
  const left = `; ${v.runs_left_out} more measured fewer clients than their rows say and are left out`;
  for (const which of ['ttft', 'tpot'])
    assert.ok((await page.getByTestId(`summary-${which}`).textContent()).includes(ledger(v, which) + left), which);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('an overloaded workload says "Overloaded" in the strip, not a plain number', async () => {
  // Llama-3.1-70B at TP 2, 1,000 in / 300 out at 2 requests/s: more than it sustains.
  const page = await openPage(env.browser,
    `${env.base}#v=1&m=llama-3.1-70b-instruct&g=H100&tp=2&mode=measured&d=100&sv=1000_300_r2_n0_u0`, DESKTOP);
  const cli = cliServe({ model: 'llama-3.1-70b-instruct', gpu: 'H100', tp: 2, mode: 'measured',
    workload: { input_tokens: 1000, output_tokens: 300, request_rate: 2 } });
  assert.equal(cli.steady_state.overloaded, true);
  assert.equal(await stripDone(page, 120000), 'done');
  const ttft = page.getByTestId('summary-ttft');
  assert.equal(await figure(page, 'ttft'), cli.ttft_ms.mean);
  assert.match(await ttft.locator('dd strong').textContent(), /^Overloaded$/);
  assert.match(await ttft.textContent(), /2\.\d\d requests\/s sent, about 1\.\d\d sustained: TTFT grows with the run/);
  assert.match(await page.getByTestId('summary-tpot').textContent(), /overloaded; mean; p90/);
  assert.equal(await figure(page, 'tpot'), cli.tpot_ms.mean);
  assert.match(await page.locator('#sum-workload').textContent(), /at 2 requests\/s/);
  assert.match(await page.locator('#sum-step small').textContent(), /^1 token in one step, mode measured$/);
  await page.locator('#summary').screenshot({ path: artifactPath('summary-strip-overloaded.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('at 390 px the strip wraps: nothing scrolls sideways, with a model that does not fit too', async () => {
  for (const hash of ['', '#v=1&m=glm-5.2-fp8&g=H100&tp=1&mode=measured']) {
    const page = await openPage(env.browser, `${env.base}${hash}`, PHONE);
    await stripDone(page);
    const wide = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      strip: [...document.querySelectorAll('#summary *')].filter((el) => el.getBoundingClientRect().right > 390)
        .map((el) => el.tagName),
    }));
    assert.ok(wide.page <= PHONE.width, `${hash || 'default'}: the page is ${wide.page} px wide`);
    assert.deepEqual(wide.strip, [], `${hash || 'default'}: parts of the strip beyond the screen`);
    const ttft = await page.getByTestId('summary-ttft').boundingBox();
    assert.ok(ttft.y + ttft.height <= PHONE.height, 'TTFT is on the first screen of the phone');
    await page.screenshot({ path: artifactPath(`summary-strip-phone${hash ? '-no-fit' : ''}.png`) });
    assert.deepEqual(page.problems, []);
    await page.close();
  }
});

test('embeds do not show the strip', async () => {
  for (const query of ['?embed=1', '?embed=1&view=serving']) {
    const page = await env.browser.newPage({ viewport: { width: 480, height: 700 } });
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${env.base}${query}`);
    await page.getByTestId(query.includes('serving') ? 'ttft' : 'step-time-us').waitFor();
    assert.equal(await page.locator('#summary').isVisible(), false, query);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

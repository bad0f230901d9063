// SPDX-License-Identifier: Apache-2.0
// Hostile links: whatever a stranger puts in the URL (#json= or the compact form),
// the page shows an error (data-testid="error"), runs nothing it was handed, loads
// nothing remote, keeps Object.prototype clean, and still prices afterwards. Also:
// the Content-Security-Policy meta tag, and every catalogue entry through #json=.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startForTests, settle } from './helpers.mjs';
import { entriesFor, inputText } from '../support/bad-inputs.mjs';
import { decodeHash, LIMITS } from '../../web/state.js';

const cli = fileURLToPath(new URL('../../build/stepcalc', import.meta.url));
const GOOD = { model: 'llama-2-7b-hf', tp: 2,
  step: { decode_requests: [{ progress_index: 777 }, { progress_index: 3000 }] } };
const goodStepTime = JSON.parse(execFileSync(cli, ['price', '-'], { input: JSON.stringify(GOOD) })).step_time_us;

const env = startForTests();

const json = (text) => `#json=${encodeURIComponent(text)}`;

/**
 * A page that records dialogs, page errors, CSP violations and requests that leave
 * the test server; `__pwned` is what hostile payloads try to set.
 */
async function openPage(hash, query = '') {
  const page = await env.browser.newPage();
  page.seen = { dialogs: [], errors: [], violations: [], remote: [] };
  page.on('dialog', (d) => { page.seen.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('pageerror', (e) => page.seen.errors.push(e.message));
  page.on('request',
    (r) => { if (!r.url().startsWith(env.base) && !r.url().startsWith('data:')) page.seen.remote.push(r.url()); });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window.__violations ??= []).push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  await page.goto(`${env.base}index.html${query}${hash}`);
  await page.waitForSelector('[data-testid="step-time-us"]');
  await settle(page);
  return page;
}

/** Two animation frames and a task: the page reprices and renders within them. */

/** Sets the hash in place (the page listens for hashchange) and lets it render. */
async function goHash(page, hash) {
  await page.evaluate((h) => new Promise((resolve) => {
    window.addEventListener('hashchange', () => resolve(), { once: true });
    location.hash = h;
  }), hash);
  await settle(page);
}

const shownErrors = (page) => page.$$eval('[data-testid="error"]', (els) =>
  els.filter((e) => e.offsetParent !== null || e.getClientRects().length > 0).map((e) => e.textContent));

/** Nothing ran, nothing was injected, nothing left the origin, the prototype is clean. */
async function assertNothingHappened(page, label) {
  const state = await page.evaluate(() => ({
    pwned: typeof window.__pwned,
    polluted: typeof Object.prototype.polluted,
    pollutedEmpty: typeof ({}).polluted,
    injectedImgs: document.querySelectorAll('img[src="x"], img[onerror]').length,
    scripts: [...document.scripts].map((s) => s.src || `inline:${s.textContent.slice(0, 40)}`),
    handlers: [...document.querySelectorAll('*')].filter((el) =>
      [...el.attributes].some((a) => /^on/i.test(a.name))).length,
  }));
  assert.deepEqual(page.seen.dialogs, [], `${label}: a dialog opened`);
  assert.equal(state.pwned, 'undefined', `${label}: window.__pwned was set`);
  assert.equal(state.polluted, 'undefined', `${label}: Object.prototype was polluted`);
  assert.equal(state.pollutedEmpty, 'undefined', `${label}: Object.prototype was polluted`);
  assert.equal(state.injectedImgs, 0, `${label}: an injected <img> is in the DOM`);
  assert.equal(state.handlers, 0, `${label}: an element carries an on* attribute`);
  assert.ok(state.scripts.every((s) => s.startsWith(env.base)), `${label}: unexpected script ${state.scripts}`);
  assert.deepEqual(page.seen.remote, [], `${label}: a request left the origin`);
}

async function assertPricesAfterwards(page, label) {
  await goHash(page, json(JSON.stringify(GOOD)));
  await page.waitForFunction((us) =>
    document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') === String(us),
    goodStepTime, { timeout: 10000 }).catch(() => {});
  assert.equal(await page.getAttribute('[data-testid="step-time-us"]', 'value'), String(goodStepTime),
    `${label}: does not price afterwards`);
  assert.deepEqual(await shownErrors(page), [], `${label}: an error is still shown after a good link`);
}

test('the page carries a Content-Security-Policy that forbids inline script and remote loads', async () => {
  const page = await openPage('');
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.ok(csp, 'no CSP meta tag');
  const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0])
    .map(([k, ...v]) => [k, v]));
  const scripts = directives['script-src'] ?? directives['default-src'];
  assert.ok(scripts, 'no script-src or default-src');
  assert.ok(!scripts.includes("'unsafe-inline'") && !scripts.includes("'unsafe-eval'") && !scripts.includes('*'), csp);
  assert.ok(scripts.every((s) => s.startsWith("'")), `script-src allows a host: ${csp}`);
  assert.deepEqual(directives['default-src'], ["'self'"], csp);
  assert.deepEqual(directives['object-src'], ["'none'"], csp);
  // The one other host the page may connect to: the Hub, for the Model panel's Hugging Face box.
  assert.deepEqual(directives['connect-src'], ["'self'", 'https://huggingface.co'], csp);

  // The policy is enforced, not only declared: an inline script, an inline handler
  // and a remote image are blocked. (eval cannot be probed from page.evaluate, which
  // DevTools runs outside the page's policy.)
  const outcome = await page.evaluate(async () => {
    const s = document.createElement('script');
    s.textContent = 'window.__pwned = "inline";';
    document.body.append(s);
    const div = document.createElement('div');
    div.innerHTML = '<img src="data:," onerror="window.__pwned = \'handler\'">'; // data:, is no image: error
    // The image's load (or error) event: an inline handler, were it allowed, runs before these listeners.
    const probe = div.querySelector('img');
    const handled = new Promise((resolve) => ['load', 'error'].forEach((e) => probe.addEventListener(e, resolve)));
    document.body.append(div);
    const img = new Image();
    const remote = await new Promise((resolve) => {
      img.onload = () => resolve('loaded');
      img.onerror = () => resolve('blocked');
      img.src = 'http://192.0.2.1/pixel.png';
    });
    await handled;
    div.remove();
    s.remove();
    return { pwned: window.__pwned, remote };
  });
  // Each refusal is reported by a securitypolicyviolation event (the init script records
  // them): wait for the inline script's, the handler's and the remote image's (a timeout
  // leaves the assertions below to say which is missing).
  await page.waitForFunction(() => {
    const seen = window.__violations ?? [];
    return seen.filter((v) => v.startsWith('script-src')).length >= 2 && seen.some((v) => v.startsWith('img-src'));
  }, null, { timeout: 10000 }).catch(() => {});
  outcome.violations = await page.evaluate(() => window.__violations ?? []);
  assert.equal(outcome.pwned, undefined);
  assert.equal(outcome.remote, 'blocked');
  assert.ok(outcome.violations.some((v) => v.startsWith('script-src')), JSON.stringify(outcome.violations));
  assert.ok(outcome.violations.some((v) => v.startsWith('img-src')), JSON.stringify(outcome.violations));
  await page.close();
});

const bigName = 'a'.repeat(150000);
const HOSTILE = [
  ['a script tag as the model', json('{"model":"<script>window.__pwned=1</script>","step":{}}')],
  ['an img onerror as the model', json('{"model":"<img src=x onerror=\\"window.__pwned=1;alert(1)\\">","step":{}}')],
  ['an svg onload as an unknown key', json('{"<svg onload=alert(1)>":1,"model":"llama-3.1-8b-instruct","step":{}}')],
  ['a script tag in the gpu',
    json('{"model":"llama-3.1-8b-instruct","gpu":"</p><script>alert(1)</script>","step":{}}')],
  ['a javascript: URL as the mode', json('{"model":"llama-3.1-8b-instruct","mode":"javascript:alert(1)","step":{}}')],
  ['an HTML-laden config key path',
    json('{"model":{"num_hidden_layers":"<b ' +
      'onmouseover=alert(1)>x</b>","hidden_size":4096,"num_attention_heads":32,"torch_dtype":"bfloat16"},"step":{}}')],
  ['__proto__ pollution', json('{"__proto__":{"polluted":true},"model":"llama-3.1-8b-instruct","step":{}}')],
  ['constructor.prototype pollution',
    json('{"constructor":{"prototype":{"polluted":true}},"model":"llama-3.1-8b-instruct","step":{}}')],
  ['__proto__ inside the step',
    json('{"model":"llama-3.1-8b-instruct","step":{"__proto__":{"polluted":true},' +
      '"decode_requests":[{"progress_index":1,"__proto__":{"polluted":1}}]}}')],
  ['__proto__ inside the hardware',
    json('{"model":"llama-3.1-8b-instruct","hardware":{"__proto__":{"polluted":true}},"step":{}}')],
  ['__proto__ inside corrected settings',
    json('{"model":"llama-3.1-8b-instruct","mode":"corrected",' +
      '"corrected":{"switches":{"__proto__":{"polluted":true}}},"step":{}}')],
  // Config objects may hold any keys (HuggingFace configs do): priced, but inert.
  ['__proto__ in a compact-form config',
    '#v=1&ms=32_4096_32_8_14336_128256_2&mx=' + encodeURIComponent('{"__proto__":{"polluted":true}}'), 'may price'],
  ['__proto__ in a #json= config',
    json('{"model":{"num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,"torch_dtype":"bfloat16",' +
      '"__proto__":{"polluted":true}},"step":{}}'), 'may price'],
  ['a huge #json= payload (above the link limit)', json(`{"model":"${bigName}","step":{}}`)],
  ['a huge compact-form payload', `#v=1&m=llama-3.1-8b-instruct&d=${'1,'.repeat(110000)}1`],
  ['a broken percent-encoding', '#json=%7B%22model%22%3A%E0%A4%A'],
  ['a lone percent sign', '#json=%'],
  ['an invalid percent escape', '#json=%ZZ'],
  ['percent-encoded invalid UTF-8', '#json=%7B%22model%22%3A%22%C3%28%22%7D'],
  ['percent-encoded lone surrogate', '#json=%ED%A0%80'],
  ['not JSON at all', '#json=javascript:alert(1)'],
  ['JSON that is not an object', json('"<script>alert(1)</script>"')],
  ['JSON null', json('null')],
  ['a JSON array', json('[{"model":"llama-3.1-8b-instruct","step":{}}]')],
  ['nesting 30,000 deep (within the link limit: the depth check answers)', json('['.repeat(30000) + ']'.repeat(30000))],
  ['NaN as a token count',
    json('{"model":"llama-3.1-8b-instruct","step":{"decode_requests":[{"progress_index":NaN}]}}')],
  ['a number beyond double range', json('{"model":"llama-3.1-8b-instruct","tp":1e400,"step":{}}')],
  ['tp 0 in the compact form', '#v=1&m=llama-3.1-8b-instruct&tp=0'],
  ['a script tag as a compact-form preset', `#v=1&m=${encodeURIComponent('<script>window.__pwned=1</script>')}`],
  ['an img tag as a compact-form GPU',
    `#v=1&m=llama-3.1-8b-instruct&g=${encodeURIComponent('<img src=x onerror=alert(1)>')}`],
  ['a hardware value that is not a number', '#v=1&m=llama-3.1-8b-instruct&tf=Infinity'],
  ['compact form from the future', '#v=99&m=llama-3.1-8b-instruct'],
  ['a broken compact-form run list', '#v=1&m=llama-3.1-8b-instruct&d=1x%FF,-5'],
];

for (const [label, hash, expect = 'error'] of HOSTILE) {
  test(`hostile link: ${label}`, async () => {
    const page = await openPage(hash);
    try {
      const errors = await shownErrors(page);
      if (expect === 'error') assert.ok(errors.length > 0, `${label}: no error is shown`);
      assert.ok(errors.every((t) => !/undefined|\[object /.test(t)), `${label}: unhelpful error ${errors}`);
      await assertNothingHappened(page, label);
      assert.deepEqual(page.seen.errors, [], `${label}: uncaught page errors`);
      await assertPricesAfterwards(page, label);
    } finally {
      await page.close();
    }
  });
}

/**
 * Opens each hash in turn in the page (hashchange, two frames and a task each) and
 * returns what each showed: one round trip for many links instead of several per link.
 */
const visitAll = (page, hashes) => page.evaluate(async (list) => {
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))));
  const out = [];
  for (const hash of list) {
    await new Promise((resolve) => {
      window.addEventListener('hashchange', () => resolve(), { once: true });
      location.hash = hash;
    });
    await frames();
    out.push({
      errors: [...document.querySelectorAll('[data-testid="error"]')]
        .filter((e) => e.offsetParent !== null || e.getClientRects().length > 0).map((e) => e.textContent),
      // A bad link in an embed shows no number at all: read it only if it is there.
      shown: document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') ?? null,
      harm: [typeof window.__pwned !== 'undefined' && 'window.__pwned was set',
        typeof Object.prototype.polluted !== 'undefined' && 'Object.prototype was polluted',
        document.querySelectorAll('img[src="x"], img[onerror]').length && 'an injected <img> is in the DOM',
        [...document.querySelectorAll('*')].some((el) => [...el.attributes].some((a) => /^on/i.test(a.name)))
          && 'an element carries an on* attribute'].filter(Boolean),
    });
  }
  return out;
}, hashes);

test('every catalogue entry fed through #json= gives an error on the page (or its price)', async () => {
  // The embedded view decodes links the same way and renders less per link.
  const page = await openPage('', '?embed=1');
  const problems = [];
  try {
    const entries = entriesFor('page').map((entry) => ({ entry, text: inputText(entry.input) }))
      .map((e) => ({ ...e, hash: json(e.text) }))
      .filter((e) => e.hash.length <= 3000000); // above what a URL can carry at all (tested above)
    // Links within the page's limit in batches; the few longer ones one by one.
    const small = entries.filter((e) => e.hash.length <= LIMITS.hashChars);
    const seen = new Map();
    for (let i = 0; i < small.length; i += 40) {
      const batch = small.slice(i, i + 40);
      (await visitAll(page, batch.map((e) => e.hash))).forEach((r, k) => seen.set(batch[k], r));
    }
    // Links over the limit all meet the same length check before anything is read: in
    // the page, the shortest of them (each costs the browser seconds); all of them in
    // node, through the page's own decoder.
    const long = entries.filter((x) => x.hash.length > LIMITS.hashChars).sort((a, b) => a.hash.length - b.hash.length);
    for (const e of long) {
      assert.throws(() => decodeHash(e.hash), (error) => error.path === 'url',
        `${e.entry.name}: not refused by length`);
    }
    if (long.length) seen.set(long[0], (await visitAll(page, [long[0].hash]))[0]);
    for (const [{ entry, text, hash }, { errors, shown, harm }] of seen) {
      if (entry.code !== null && hash.length <= 200000) {
        if (errors.length === 0) {
          problems.push(`${entry.name}: no error shown (expected ${entry.code} at ${entry.path})`);
        } else if (entry.path && !errors.some((e) => e.includes(entry.path.slice(0, 40)))) {
          problems.push(`${entry.name}: error "${errors[0].slice(0, 160)}" does not name ${entry.path}`);
        }
      } else if (entry.code !== null || hash.length > 200000) {
        if (errors.length === 0) problems.push(`${entry.name}: no error shown for a link too long or invalid`);
      } else {
        const native = JSON.parse(execFileSync(cli, ['price', '-'], { input: text, maxBuffer: 1 << 28 }));
        if (errors.length > 0) {
          problems.push(`${entry.name}: error "${errors[0].slice(0, 160)}" for a priced input`);
        } else if (shown !== String(native.step_time_us)) {
          problems.push(`${entry.name}: shows ${shown}, CLI ${native.step_time_us}`);
        }
      }
      problems.push(...harm.map((h) => `${entry.name}: ${h}`));
    }
    assert.equal(seen.size, small.length + Math.min(1, long.length));
    await assertNothingHappened(page, 'the catalogue');
    assert.deepEqual(page.seen.errors, []);
    assert.deepEqual(problems, []);
    await assertPricesAfterwards(page, 'after the catalogue');
  } finally {
    await page.close();
  }
});

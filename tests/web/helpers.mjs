// SPDX-License-Identifier: Apache-2.0
// Shared by the page tests: the static server in-process, headless
// Chromium, the CLI, and a page that records console errors.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createServer, listen, PAGE_FILES } from '../../scripts/serve.mjs';
import { buildPage } from '../../scripts/build-page.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const artifacts = path.join(root, 'test-results');

/** Starts the server on a free port and Chromium; returns {base, browser, close}. */
export async function start() {
  await buildPage({ ifStale: true }); // the page served is the bundle of today's sources
  const server = createServer({ allow: [...PAGE_FILES, 'tests/web/fixtures/'] });
  const port = await listen(server, 0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return {
    base: `http://127.0.0.1:${port}/`,
    browser,
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * For a test file: starts the server and Chromium before its tests and closes them after.
 * The object returned gets `base` and `browser` (and `close`) once they have started.
 */
export function startForTests() {
  const env = {};
  before(async () => { Object.assign(env, await start()); });
  after(async () => { await env.close?.(); });
  return env;
}

/**
 * The step time of the priced state, not the reference model's figure a fresh page shows first
 * while its GPU's measured tables load (marked data-first="reference").
 */
export const MEASURED_NUMBER = '[data-testid="step-time-us"]:not([data-first])';

/** A new page whose console errors and page errors land in `page.problems`. */
export async function openPage(browser, url, viewport = { width: 1280, height: 900 }, options = {}) {
  const page = await browser.newPage({ viewport, ...options });
  page.problems = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  await page.goto(url);
  await page.waitForSelector(MEASURED_NUMBER);
  return page;
}

/** The displayed integer step time. */
export async function shownStepTime(page) {
  return Number(await page.getAttribute('[data-testid="step-time-us"]', 'value'));
}

/** Waits until the shown step time differs from `before`; returns it. */
export async function nextStepTime(page, before) {
  await page.waitForFunction((b) =>
    document.querySelector('[data-testid="step-time-us"]')?.getAttribute('value') !== String(b), before);
  return shownStepTime(page);
}

/** Resolves after two animation frames and a task: the page has handled the input before it. */
export const settle = (page) =>
  page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));

/** Puts `text` in the Model panel's config box and presses "Use this config". */
export async function useConfig(page, text) {
  await page.fill('#config-text', text);
  await page.getByRole('button', { name: 'Use this config' }).click();
}

/** Asserts that the page shows no error and logged none, then closes it. */
export async function closeWithoutErrors(page) {
  assert.equal(await page.locator('[data-testid="error"]').count(), 0);
  assert.deepEqual(page.problems, []);
  await page.close();
}

/** The CLI's step_time_us for a request object (build/stepcalc price). */
export function cliStepTime(request) {
  const out = execFileSync(path.join(root, 'build/stepcalc'), ['price'], { input: JSON.stringify(request) });
  return JSON.parse(out.toString()).step_time_us;
}

/** The request the page currently shows, from its JSON export. */
export async function pageRequest(page) {
  if (!(await page.isVisible('#request-json'))) await page.click('#io summary');
  await page.click('#export-json');
  return JSON.parse(await page.inputValue('#request-json'));
}

export function artifactPath(name) {
  mkdirSync(artifacts, { recursive: true });
  return path.join(artifacts, name);
}

/** WCAG contrast ratio of two CSS colours "rgb(r, g, b)" (1 .. 21). */
export function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/[\d.]+/g).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * Opens the <details> `selector` by a click on its summary once the page has stopped moving:
 * the serving simulation started after the first view has shown its figures (until then a
 * panel's height can change and a click aimed below it land elsewhere). Fails if it is not open.
 */
export async function openDetails(page, selector) {
  await page.waitForFunction(() => {
    const panel = document.querySelector('#serving-panel');
    return !panel || panel.hidden || ['done', 'error', 'cancelled'].includes(panel.dataset.run);
  }, null, { timeout: 60000 });
  await page.click(`${selector} > summary`);
  await page.waitForSelector(`${selector}[open]`, { timeout: 5000 });
}

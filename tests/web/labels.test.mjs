// SPDX-License-Identifier: Apache-2.0
// Texts that fit and controls that can be named and reached (issue 26): no select shows a
// cut-off choice at 1366 or 390 px (measured against its own font), no chart label reaches
// past its chart, the Serving panel's load input has a name, and the roofline takes the
// focus, reads its operators out one by one and has a legend for its marks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, startForTests } from './helpers.mjs';

const env = startForTests();

/** The page with the Plan panel open and the Serving panel's curve drawn. */
async function openAll(viewport) {
  const page = await openPage(env.browser, env.base, viewport);
  await page.click('#plan summary');
  await page.getByTestId('plan-model').waitFor();
  await page.locator('#serving-panel').scrollIntoViewIfNeeded();
  await page.locator('[data-testid="serve-curve"]').waitFor({ timeout: 60000 });
  await page.locator('#roofline svg.roofline').waitFor();
  return page;
}

for (const viewport of [{ width: 1366, height: 800 }, { width: 390, height: 844 }]) {
  test(`at ${viewport.width} px every select shows its whole choice and every chart label is inside its chart`,
    async () => {
      const page = await openAll(viewport);
      const cut = await page.evaluate(() => {
        const context = document.createElement('canvas').getContext('2d');
        return [...document.querySelectorAll('select')].filter((s) => s.offsetParent).flatMap((s) => {
          const style = getComputedStyle(s);
          context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
          const text = s.selectedOptions[0]?.textContent ?? '';
          // The room for the text: the content box less the arrow (about 20 px).
          const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
          return context.measureText(text).width > room ? [`${s.id || s.dataset.testid}: "${text}"`] : [];
        });
      });
      assert.deepEqual(cut, [], 'selects whose choice is cut off');
      const charts = 'svg.roofline, svg.serve-curve, svg.line';
      const outside = await page.evaluate((selector) => [...document.querySelectorAll(selector)]
        .flatMap((chart) => {
          const width = Number(chart.getAttribute('width'));
          return [...chart.querySelectorAll('text:not([transform])')].flatMap((t) => {
            const box = t.getBBox();
            return box.x < -0.5 || box.x + box.width > width + 0.5
              ? [`${chart.getAttribute('class')}: "${t.textContent}" ${Math.round(box.x)}..` +
                `${Math.round(box.x + box.width)} of ${width}`] : [];
          });
        }), charts);
      assert.deepEqual(outside, [], 'chart labels cut at the chart\'s edge');
      assert.deepEqual(page.problems, []);
      await page.close();
    });
}

test('the load input is named after the load it takes; the roofline takes the focus and names its points', async () => {
  const page = await openAll({ width: 1366, height: 800 });
  await page.getByRole('textbox', { name: 'Concurrency (clients)' }).waitFor();
  await page.getByTestId('serve-load-kind').selectOption('rate');
  await page.getByRole('textbox', { name: 'Request rate (requests per second)' }).waitFor();
  assert.equal(await page.getByTestId('serve-load-hint').textContent(), 'requests per second');

  const chart = page.locator('#roofline svg.roofline');
  assert.equal(await chart.getAttribute('tabindex'), '0');
  await chart.focus();
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('roofline')), true);
  const readout = page.getByTestId('roofline-readout');
  const slowest = await page.locator('#roofline .point.slowest').getAttribute('data-name');
  await page.waitForFunction((name) =>
    document.querySelector('[data-testid="roofline-readout"]').textContent.startsWith(`${name}: `), slowest);
  await page.keyboard.press('Home');
  const first = await readout.textContent();
  assert.match(first,
    /^[\w ()-]+: [\d,.]+ FLOP\/byte, [\d.,]+ [TG]FLOP\/s \(\d+% of its roof\), .*-bound \(1 of \d+\)$/);
  await page.keyboard.press('ArrowRight');
  assert.match(await readout.textContent(), /\(2 of \d+\)$/);
  assert.equal(await page.locator('#roofline .point.selected').count(), 1);
  // The legend says what each mark is, the ring of the slowest included, and describes the chart.
  const legend = await page.getByTestId('roofline-legend').textContent();
  for (const words of ['compute-bound (square)', 'memory-bound (circle)',
    'ringed: the operator that takes the most time']) assert.ok(legend.includes(words), words);
  assert.equal(await chart.getAttribute('aria-describedby'), 'roofline-legend');
  // The GPU and the kernel tables: short choices, the long words under them.
  assert.equal(await page.locator('#gpu option:checked').textContent(), 'H100');
  assert.match(await page.getByTestId('gpu-device').textContent(), /^NVIDIA H100/);
  assert.equal(await page.locator('#kernels option:checked').textContent(), 'default');
  assert.match(await page.getByTestId('kernels-hint').textContent(), /^vLLM version measured; default: vllm-/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

// SPDX-License-Identifier: Apache-2.0
// The charts as a reader sees them: tick labels that do not overlap (measured in the
// DOM), axis titles with units, round ticks, a palette that stands out from the card
// and from itself in light and dark, and every value reachable without a mouse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, contrast, startForTests } from './helpers.mjs';

const env = startForTests();

// The step the issue saw overlapping ticks on ("2k" over "2,528", "500" over "512").
const HASH = '#v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=blis-v2&p=0.2528&d=512~64*64';

/** CIE76 colour difference of two "rgb(...)" colours (CIELAB, D65). */
function deltaE(a, b) {
  const lab = (c) => {
    const [r, g, bl] = c.match(/[\d.]+/g).slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
    const x = f((0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047), y = f(0.2126 * r + 0.7152 * g + 0.0722 * bl);
    const z = f((0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883);
    return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
  };
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

test('sweep ticks do not overlap, axes have titles with units, y ticks are round', async () => {
  for (const width of [1440, 390]) {
    const page = await openPage(env.browser, `${env.base}${HASH}`, { width, height: 900 });
    await page.waitForFunction(() => document.querySelectorAll('#sweeps svg.line').length === 3);
    const charts = await page.locator('#sweeps svg.line').evaluateAll((svgs) => svgs.map((s) => ({
      x: [...s.querySelectorAll('.x-tick')].map((t) => {
        const b = t.getBoundingClientRect();
        return { text: t.textContent, l: b.left, r: b.right };
      }),
      y: [...s.querySelectorAll('.y-tick')].map((t) => t.textContent),
      titles: [...s.querySelectorAll('.axis-title')].map((t) => t.textContent),
    })));
    for (const c of charts) {
      assert.ok(c.x.length >= 3, `${width}px: only ${c.x.length} x ticks`);
      c.x.sort((a, b) => a.l - b.l);
      for (let i = 1; i < c.x.length; i++) {
        assert.ok(c.x[i].l >= c.x[i - 1].r + 2, `${width}px: "${c.x[i - 1].text}" and "${c.x[i].text}" overlap`);
      }
      assert.ok(!c.x.some((t) => t.text === '2,528'), 'the current value is marked, not written among the ticks');
      assert.equal(c.titles.length, 2);
      assert.match(c.titles[1], /^Step time \((ms|µs)\)$/);
      assert.match(c.titles[0], /\(log scale\)$/);
      const values = c.y.map((t) => Number(t.replace(/,/g, '')));
      const step = values[1] - values[0];
      assert.ok(values.every((v, i) => Math.abs(v - i * step) < 1e-9), `y ticks ${c.y}`);
      assert.ok([1, 2, 2.5, 5].includes(Number((step / 10 ** Math.floor(Math.log10(step))).toFixed(6))),
        `y step ${step}`);
    }
    assert.deepEqual(page.problems, []);
    await page.close();
  }
});

test('every chart colour is >= 3:1 against the card and distinct from the others, light and dark', async () => {
  for (const colorScheme of ['light', 'dark']) {
    for (const mode of ['blis-v2', 'corrected']) {
      const hash = `#v=1&m=llama-3.1-8b-instruct&g=H100&tp=2&mode=${mode}&p=0.2048&d=512~64*64`;
      const page = await openPage(env.browser, `${env.base}${hash}`, { width: 1280, height: 900 }, { colorScheme });
      const { card, swatches } = await page.evaluate(() => ({
        card: getComputedStyle(document.querySelector('.card')).backgroundColor,
        swatches: [...document.querySelectorAll('#breakdown .legend .swatch')].map((s) => ({
          name: s.parentElement.textContent, color: getComputedStyle(s).backgroundColor,
        })),
      }));
      assert.ok(swatches.length >= 8, `${colorScheme} ${mode}: ${swatches.length} legend entries`);
      for (const s of swatches) {
        const c = contrast(s.color, card);
        assert.ok(c >= 3, `${colorScheme} ${mode}: ${s.name} ${s.color} is ${c.toFixed(2)}:1 on ${card}`);
      }
      for (let i = 0; i < swatches.length; i++) {
        for (let j = i + 1; j < swatches.length; j++) {
          const d = deltaE(swatches[i].color, swatches[j].color);
          assert.ok(d >= 15,
            `${colorScheme} ${mode}: ${swatches[i].name} and ${swatches[j].name} differ by only ${d.toFixed(1)}`);
        }
      }
      // The bars that do not bind keep their colour (no transparency that fades them).
      const opacities = await page.locator('svg.breakdown rect')
        .evaluateAll((rs) => rs.map((r) => getComputedStyle(r).opacity));
      assert.ok(opacities.every((o) => o === '1'), `faded bars: ${opacities}`);
      await page.close();
    }
  }
});

test('chart values are reachable without a mouse: tables of every value, keyboard readouts', async () => {
  const page = await openPage(env.browser, `${env.base}${HASH}`);
  await page.waitForFunction(() => document.querySelectorAll('#sweeps svg.line').length === 3);
  const tables = page.locator('details.values');
  assert.equal(await tables.count(), 4, 'the breakdown and three sweeps each have a values table');
  await tables.first().locator('summary').click();
  const rows = await tables.first().locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent));
  assert.ok(rows.some((r) => /^Step/.test(r) && /ms/.test(r)), rows.join('\n'));
  assert.ok(rows.some((r) => /attention/.test(r) && /%/.test(r)), rows.join('\n'));
  const sweep = page.locator('#sweeps svg.line').first();
  await sweep.focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await page.locator('.readout').first().textContent(), /ms|µs/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

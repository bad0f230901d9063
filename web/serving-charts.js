// SPDX-License-Identifier: Apache-2.0
// The Serving panel's charts (web/serving-panel.js): the latency-throughput curve over
// concurrency (mean TPOT against output tokens/s, the ledger's error as a band) and the
// latency curve over request rate (TTFT above, TPOT below, each mean and p90 against
// requests per second), with the user's targets as horizontal lines: a point above its line
// is a miss, drawn in the error colour; an overloaded point (steady_state.overloaded, the
// queue grows and its latency with the run) is a cross over a shaded zone.
import { svg, int, fixed } from './dom.js';
import { niceTicks } from './charts.js';
import { biasWords } from './words.js';

/** A latency; null (nothing measured, e.g. TPOT when every request generates one token) is a dash. */
export const ms = (v) => (v === null || v === undefined ? '—'
  : v >= 100 ? `${int(v)} ms` : `${fixed(v, v >= 10 ? 1 : 2)} ms`);
/** A request rate as the curve writes it: three significant digits, grouped ("0.25", "1,250"). */
export const rate = (v) => Number(v.toPrecision(3)).toLocaleString('en-US');
const tick = (t) => fixed(t, t < 10 && t % 1 ? 1 : 0);

/** A horizontal target line across a plot from `x1` to `x2` at `y`, its words above it (below near the top). */
function targetLine(metric, target, x1, x2, y, top) {
  return [svg('line', { x1, x2, y1: y, y2: y, class: 'slo', 'data-testid': `slo-${metric}` },
    svg('title', {}, `${metric.toUpperCase()} target: ${ms(target)}; a point above the line misses it`)),
  svg('text', { x: x2 - 2, y: y - 4 < top + 10 ? y + 12 : y - 4, 'text-anchor': 'end', class: 'slo-label' },
    `target ${ms(target)}`)];
}

/**
 * Where a measured value lies when the estimate `y` errs as the ledger's runs like it did
 * (MAPE `mape`, bias `bias`, percent). Errors are relative to the measured value, e = (y -
 * measured) / measured, so e in [-u, o] puts the measured value in [y / (1 + o), y / (1 - u)].
 * The MAPE m splits into what the estimates ran high, (m + b) / 2 of it, and low, (m - b) / 2;
 * each side reaches twice its share, at most m: o = min(m, m + b), u = min(m, m - b) (+-m where
 * the runs erred both ways alike, one side only where they all erred one way). From u = 100%
 * on nothing bounds the measured value above (`hi` Infinity).
 */
export function bandEdges(y, mape, bias = 0) {
  const m = mape / 100, b = Math.max(-m, Math.min(m, bias / 100));
  const over = Math.min(m, m + b), under = Math.min(m, m - b);
  return { lo: y / (1 + over), hi: under < 1 ? y / (1 - under) : Infinity };
}

/**
 * A band's outline: along `points` at their upper edge, back at their lower edge (pixels from
 * `x`, `hi` and `lo` of a point).
 */
function bandPath(points, x, hi, lo) {
  return [...points.map((p, i) => `${i ? 'L' : 'M'}${x(p).toFixed(1)},${hi(p).toFixed(1)}`),
    ...[...points].reverse().map((p) => `L${x(p).toFixed(1)},${lo(p).toFixed(1)}`), 'Z'].join('');
}

/**
 * The latency-throughput curve: output tokens/s against mean TPOT, one point per concurrency,
 * `current` (this workload) marked, `band` the ledger's TPOT error ({mape, bias, runs}: where
 * the measured TPOT lies at such errors, bandEdges), `target` the TPOT target (ms).
 */
export function curveChart(points, current, width = 520, height = 220, band = null, target = null) {
  const pad = { l: 56, r: 24, t: 10, b: 42 }; // r: room for half the last tick label ("3,000")
  const all = current ? [...points, current] : points;
  // Room above the curve for the band, at most three times the curve's height (the band is
  // clipped there: beyond it, or unbounded from an error of 100%, it runs off the top).
  const edges = (p) => bandEdges(p.y, band.mape, band.bias);
  const room = band ? Math.min(edges({ y: 1 }).hi, 3) : 1;
  const xTicks = niceTicks(Math.max(...all.map((p) => p.x)), 4);
  const yTicks = niceTicks(Math.max(Math.max(...all.map((p) => p.y)) * room, target ?? 0), 4);
  const X = (x) => pad.l + (x / (xTicks[xTicks.length - 1] || 1)) * (width - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - y / (yTicks[yTicks.length - 1] || 1)) * (height - pad.t - pad.b);
  const chart = svg('svg', { class: 'line serve-curve', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'data-testid': 'serve-curve',
    'aria-label': `Mean TPOT against output throughput for concurrency ${points.map((p) => p.c).join(', ')}` +
      (target ? `; TPOT target ${ms(target)}` : '') });
  for (const t of yTicks) {
    chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: Y(t), y2: Y(t), class: 'grid' }),
      svg('text', { x: pad.l - 5, y: Y(t) + 4, 'text-anchor': 'end', class: 'tick y-tick' }, tick(t)));
  }
  for (const t of xTicks) {
    chart.append(svg('text', { x: X(t), y: height - pad.b + 15, 'text-anchor': 'middle', class: 'tick x-tick' },
      int(t)));
  }
  chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: height - pad.b, y2: height - pad.b, class: 'axis' }),
    svg('text', { x: pad.l + (width - pad.l - pad.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis-title' },
      'Output tokens/s'),
    svg('text', { x: 12, y: pad.t + (height - pad.t - pad.b) / 2, 'text-anchor': 'middle', class: 'axis-title',
      transform: `rotate(-90 12 ${pad.t + (height - pad.t - pad.b) / 2})` }, 'Mean TPOT (ms)'),
    ...(band ? [svg('path', { class: 'band', 'data-testid': 'serve-band',
      d: bandPath(points, (p) => X(p.x), (p) => Y(Math.min(edges(p).hi, yTicks[yTicks.length - 1])),
        (p) => Y(edges(p).lo)) },
    svg('title', {}, `±${fixed(band.mape, 0)}%: the TPOT error on ${int(band.runs)} measured runs like this` +
      `${biasWords(band.bias)}; shaded: where the measured TPOT lies at such errors`))] : []),
    ...(target ? targetLine('tpot', target, pad.l, width - pad.r, Y(target), pad.t) : []),
    svg('path', { class: 'curve',
      d: points.map((p, i) => `${i ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join('') }));
  for (const p of points) {
    const miss = target !== null && p.y > target;
    chart.append(svg('circle', { cx: X(p.x), cy: Y(p.y), r: miss ? 4 : 3, class: `point${miss ? ' miss' : ''}`,
      'data-concurrency': p.c },
    svg('title', {}, `concurrency ${p.c}: ${int(p.x)} tok/s, TPOT ${ms(p.y)}${miss ? ', above the target' : ''}`)));
  }
  if (current) {
    chart.append(svg('circle',
      { cx: X(current.x), cy: Y(current.y), r: 6, class: 'now', 'data-testid': 'curve-current' },
      svg('title', {}, `this workload: ${int(current.x)} tok/s, TPOT ${ms(current.y)}`)));
  }
  return chart;
}

/**
 * A point of the curve over request rate from a serve result: {rate, own, overloaded, ttft, tpot}
 * (each latency {mean, p50, p90, p99}; null figures when nothing was measured).
 */
export function ratePoint(p) {
  const r = p.result;
  return { rate: p.rate, own: !!p.own, overloaded: r.steady_state?.overloaded === true, ttft: r.ttft_ms,
    tpot: r.tpot_ms, requests: r.throughput.requests_per_s, tokens: r.throughput.output_tokens_per_s };
}

/**
 * Which targets a point misses: ['TTFT mean', 'TTFT p90', ...] (targets in ms, null: none).
 * @param {{ttft: any, tpot: any}} p @param {{ttft: number | null, tpot: number | null}} targets
 */
export function misses(p, targets) {
  const out = [];
  for (const metric of /** @type {const} */ (['ttft', 'tpot'])) {
    const target = targets[metric];
    if (target === null) continue;
    for (const stat of ['mean', 'p90']) if (p[metric][stat] !== null && p[metric][stat] > target) {
      out.push(`${metric.toUpperCase()} ${stat}`);
    }
  }
  return out;
}

/**
 * The latency curve over request rate: TTFT (above) and TPOT (below) against requests per
 * second, the mean solid and the p90 dashed; the workload's own point ringed; overloaded
 * points as crosses over a shaded zone; `targets` ({ttft, tpot} in ms, null: none) as lines.
 * A plot's scale is set by the points that are not overloaded (and the target): a latency
 * above it (an overloaded run's, which only grows with the run) is a triangle at its top.
 * @param {ReturnType<typeof ratePoint>[]} points sorted by rate
 * @param {{ttft: number | null, tpot: number | null}} targets
 */
export function rateChart(points, targets, width = 520, validation = null) {
  const pad = { l: 56, r: 24, t: 14 };
  const plotH = 120, gap = 30, bottom = 42;
  const height = pad.t + 2 * plotH + gap + bottom;
  const xTicks = niceTicks(Math.max(...points.map((p) => p.rate)), 4);
  const X = (x) => pad.l + (x / (xTicks[xTicks.length - 1] || 1)) * (width - pad.l - pad.r);
  const chart = svg('svg', { class: 'line serve-curve serve-rate-curve', width, height,
    viewBox: `0 0 ${width} ${height}`, role: 'img', 'data-testid': 'serve-curve',
    'aria-label': `Mean and p90 TTFT and TPOT against request rate for ${points.map((p) => rate(p.rate)).join(', ')} ` +
      'requests/s' + (points.some((p) => p.overloaded) ? '; crosses: overloaded' : '') +
      (targets.ttft !== null ? `; TTFT target ${ms(targets.ttft)}` : '') +
      (targets.tpot !== null ? `; TPOT target ${ms(targets.tpot)}` : '') });
  const first = points.findIndex((p) => p.overloaded);
  if (first >= 0) { // the overloaded zone: from between the last sustained point and the first overloaded one
    const x0 = first === 0 ? pad.l : (X(points[first - 1].rate) + X(points[first].rate)) / 2;
    chart.append(svg('rect', { x: x0, y: pad.t, width: Math.max(0, width - pad.r - x0), class: 'overload-zone',
      height: 2 * plotH + gap, 'data-testid': 'overload-zone' },
    svg('title', {}, `Overloaded from ${rate(points[first].rate)} requests/s: the queue grows, so latency grows ` +
      'with the length of the run')),
    svg('text', { x: width - pad.r - 2, y: pad.t + 2 * plotH + gap - 4, 'text-anchor': 'end', class: 'overload-label' },
      'overloaded'));
  }
  ['ttft', 'tpot'].forEach((metric, panel) => {
    const top = pad.t + panel * (plotH + gap);
    const target = targets[metric];
    const sustained = points.filter((p) => !p.overloaded);
    const values = (sustained.length ? sustained : points).flatMap((p) => [p[metric].mean, p[metric].p90])
      .filter((v) => v !== null);
    const yTicks = niceTicks(Math.max(0, ...values, target ?? 0) * 1.05, 3);
    const yMax = yTicks[yTicks.length - 1] || 1;
    const Y = (y) => top + (1 - Math.min(y, yMax) / yMax) * plotH;
    for (const t of yTicks) {
      chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: Y(t), y2: Y(t), class: 'grid' }),
        svg('text', { x: pad.l - 5, y: Y(t) + 4, 'text-anchor': 'end', class: 'tick y-tick' }, tick(t)));
    }
    chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: top + plotH, y2: top + plotH, class: 'axis' }),
      svg('text', { x: 12, y: top + plotH / 2, 'text-anchor': 'middle', class: 'axis-title',
        transform: `rotate(-90 12 ${top + plotH / 2})` }, `${metric.toUpperCase()} (ms)`));
    // Under the mean curve of the points that are not overloaded, the ledger's error on runs like
    // this (bandEdges, the metric's own MAPE and bias), clipped at the plot's top.
    const banded = sustained.filter((p) => p[metric].mean !== null);
    if (validation && validation.subset !== null && banded.length) {
      const mape = validation[`${metric}_mape`], bias = validation[`${metric}_bias`];
      const edges = (p) => bandEdges(p[metric].mean, mape, bias);
      chart.append(svg('path', { class: 'band', 'data-testid': `serve-band-${metric}`,
        d: bandPath(banded, (p) => X(p.rate), (p) => Y(edges(p).hi), (p) => Y(edges(p).lo)) },
      svg('title', {}, `±${fixed(mape, 0)}%: the mean ${metric.toUpperCase()} error on ${int(validation.runs)} ` +
        `measured runs like this${biasWords(bias)}; shaded: where the measured mean lies at such errors`)));
    }
    if (target !== null) chart.append(...targetLine(metric, target, pad.l, width - pad.r, Y(target), top));
    for (const stat of ['mean', 'p90']) {
      const drawn = points.filter((p) => p[metric][stat] !== null);
      chart.append(svg('path', { class: `curve ${stat}`, 'data-metric': metric, 'data-stat': stat,
        d: drawn.map((p, i) => `${i ? 'L' : 'M'}${X(p.rate).toFixed(1)},${Y(p[metric][stat]).toFixed(1)}`).join('') }));
      for (const p of drawn) {
        const v = p[metric][stat];
        const x = X(p.rate), y = Y(v);
        const miss = target !== null && v > target;
        const off = v > yMax;
        const props = { class: `point ${stat}${p.overloaded ? ' overloaded' : ''}${miss ? ' miss' : ''}` +
          `${off ? ' off-chart' : ''}`, 'data-rate': p.rate, 'data-metric': metric, 'data-stat': stat, 'data-value': v,
          'data-overloaded': String(p.overloaded), 'data-miss': String(miss) };
        const title = svg('title', {}, `${rate(p.rate)} requests/s${p.own ? ' (this workload)' : ''}: ${stat} ` +
          `${metric.toUpperCase()} ${ms(v)}${p.overloaded ? '; overloaded: it grows with the run' : ''}` +
          `${miss ? `; above the ${ms(target)} target` : ''}${off ? '; above the plot' : ''}`);
        const r = miss ? 4.5 : 3.5;
        chart.append(p.overloaded
          ? svg('path', { ...props,
            d: `M${x - r},${y - r}L${x + r},${y + r}M${x - r},${y + r}L${x + r},${y - r}` }, title)
          : off ? svg('path', { ...props, d: `M${x},${y - 1}l${r},${2 * r}h${-2 * r}z` }, title)
            : svg('circle', { ...props, cx: x, cy: y, r }, title));
        if (p.own && stat === 'mean') {
          chart.append(svg('circle', { cx: x, cy: y, r: 7, class: 'own', 'data-testid': `curve-current-${metric}` }));
        }
      }
    }
  });
  const axisY = pad.t + 2 * plotH + gap;
  for (const t of xTicks) {
    chart.append(svg('text', { x: X(t), y: axisY + 15, 'text-anchor': 'middle', class: 'tick x-tick' }, rate(t)));
  }
  chart.append(svg('text', { x: pad.l + (width - pad.l - pad.r) / 2, y: height - 6, 'text-anchor': 'middle',
    class: 'axis-title' }, 'Request rate (requests/s)'));
  return chart;
}

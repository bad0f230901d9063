// SPDX-License-Identifier: Apache-2.0
// Writes the files of web/export-buttons.js: CSV (RFC 4180: quoted where needed, CRLF
// lines), a chart as a standalone SVG (the page's CSS colours and fonts written into
// it, so it looks the same anywhere) and as a PNG (that SVG drawn at twice the size).
// Every file says what it is of (web/export-about.js): the CSV in `#` lines above its
// header, the SVG and PNG in a title and context lines above the chart (and the SVG in
// its <title> and <desc>). Loaded on the first export.

/** One CSV field: quoted when it holds a comma, quote or line break. */
const field = (v) => {
  const s = v === null || v === undefined ? '' : typeof v === 'number' ? csvNumber(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * A number as a CSV field: whole numbers as they are, others to 6 significant digits (at
 * least to the unit: 123456.7 -> "123457"), never in exponent form for values a
 * spreadsheet reads as well without (1.5e-7 stays, 12345678.9 -> "12345679").
 */
export function csvNumber(v) {
  if (!Number.isFinite(v)) return '';
  if (Number.isInteger(v)) return String(v);
  if (Math.abs(v) >= 1e5) return String(Math.round(v));
  return String(Number(v.toPrecision(6)));
}

/** A context line as one CSV record: "# label: value" (no line breaks). */
const aboutLine = (text) => field(`# ${text}`.replace(/[\r\n]+/g, ' '));

/** The CSV records of {head, rows}, without the line break after the last. */
export const csvRecords = ({ head, rows }) => [head, ...rows].map((r) => r.map(field).join(',')).join('\r\n');

/**
 * The CSV text of {head, rows}, or of {records} (written by csvRecords, e.g. in the pricing
 * worker), under the `#` lines of `about` when given.
 * @param {{head: any[], rows: any[][]} | {records: string}} data
 */
export const csvText = (data, about = null) =>
  [...(about ? [aboutLine(about.title), ...about.lines.map(([k, v]) => aboutLine(`${k}: ${v}`))] : []),
    'records' in data ? data.records : csvRecords(data)].join('\r\n') + '\r\n';

function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The file name of an export: the About's, else the button's `name`. */
const fileName = ({ name, about }, ext) => `${about?.()?.file || name}.${ext}`;

/** `options.csv()` may return a promise (the lookups of a big step come from the pricing worker). */
export async function saveCsv(options) {
  const data = await options.csv();
  download(fileName(options, 'csv'), new Blob([csvText(data, options.about?.())], { type: 'text/csv' }));
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const STYLE_PROPS = ['fill', 'stroke', 'stroke-width', 'stroke-dasharray', 'opacity', 'font-family', 'font-size',
  'font-weight'];
const PAD = 6; // px of card around everything drawn
const TITLE_PX = 14, LINE_PX = 11;

/** `lines` wrapped to `width` px at `px` font size (an estimate: 0.56 em per character). */
function wrap(words, width, px) {
  const most = Math.max(20, Math.floor(width / (px * 0.56)));
  const out = [];
  let line = '';
  for (const word of words) {
    const next = line ? `${line} · ${word}` : word;
    if (next.length <= most || !line) line = next;
    else {
      out.push(line);
      line = word;
    }
  }
  if (line) out.push(line);
  return out.flatMap((l) => (l.length <= most ? [l] : l.match(new RegExp(`.{1,${most}}`, 'g'))));
}

const textEl = (attrs, content) => {
  const el = document.createElementNS(SVG_NS, 'text');
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.textContent = content;
  return el;
};

/**
 * `svg` as standalone SVG text: computed styles inlined, the card's background behind it,
 * grown to hold whatever is drawn past the chart's edges (a tick label at the last tick),
 * with the title and context of `about` above it.
 * @param {SVGSVGElement} svg @param {import('./export-about.js').About | null} [about]
 */
export const svgText = (svg, about = null) => standalone(svg, about).text;

/** svgText's text and the size it has, in px. */
function standalone(svg, about) {
  const chart = svg.cloneNode(true);
  const from = [svg, ...svg.querySelectorAll('*')];
  const to = [chart, ...chart.querySelectorAll('*')];
  from.forEach((el, i) => {
    const style = getComputedStyle(el);
    for (const p of STYLE_PROPS) {
      const v = style.getPropertyValue(p);
      if ((v && v !== 'none') || p === 'fill') to[i].setAttribute(p, v);
    }
    to[i].removeAttribute('class');
    to[i].removeAttribute('tabindex');
  });
  const width = Number(svg.getAttribute('width')), height = Number(svg.getAttribute('height'));
  // What is drawn, in the chart's units (its viewBox is its size): labels may reach past it.
  const box = svg.getBBox();
  const x0 = Math.min(0, Math.floor(box.x)) - PAD, x1 = Math.max(width, Math.ceil(box.x + box.width)) + PAD;
  const y0 = Math.min(0, Math.floor(box.y)) - PAD, y1 = Math.max(height, Math.ceil(box.y + box.height)) + PAD;
  const outWidth = x1 - x0;
  const font = getComputedStyle(svg).fontFamily;
  const colour = getComputedStyle(svg.closest('.card') || document.body).color;
  const context = about ? wrap(about.lines.filter(([k]) => k !== 'link').map(([k, v]) => `${k} ${v}`),
    outWidth - 2 * PAD, LINE_PX) : [];
  const headHeight = about ? PAD + TITLE_PX + 4 + context.length * (LINE_PX + 3) + 4 : 0;

  const out = document.createElementNS(SVG_NS, 'svg');
  out.setAttribute('xmlns', SVG_NS);
  out.setAttribute('width', String(outWidth));
  out.setAttribute('height', String(headHeight + y1 - y0));
  out.setAttribute('viewBox', `0 0 ${outWidth} ${headHeight + y1 - y0}`);
  for (const name of ['role', 'aria-label']) if (svg.hasAttribute(name)) out.setAttribute(name, svg.getAttribute(name));
  if (about) {
    const title = document.createElementNS(SVG_NS, 'title');
    title.textContent = about.title;
    const desc = document.createElementNS(SVG_NS, 'desc');
    desc.textContent = about.lines.map(([k, v]) => `${k}: ${v}`).join('\n');
    out.append(title, desc);
  }
  const background = document.createElementNS(SVG_NS, 'rect');
  background.setAttribute('width', '100%');
  background.setAttribute('height', '100%');
  background.setAttribute('fill', getComputedStyle(svg.closest('.card') || document.body).backgroundColor);
  out.append(background);
  if (about) {
    const common = { 'font-family': font, fill: colour };
    out.append(textEl({ ...common, x: PAD, y: PAD + TITLE_PX, 'font-size': TITLE_PX, 'font-weight': 700,
      'data-about': 'title' }, about.title));
    context.forEach((line, i) => out.append(textEl({ ...common, x: PAD, y: PAD + TITLE_PX + 4 + (i + 1) * (LINE_PX + 3),
      'font-size': LINE_PX, 'data-about': 'context' }, line)));
  }
  // The chart itself, moved below the header and right of anything drawn left of it.
  chart.removeAttribute('xmlns');
  chart.setAttribute('x', String(-x0));
  chart.setAttribute('y', String(headHeight - y0));
  chart.setAttribute('overflow', 'visible');
  for (const name of ['role', 'aria-label']) chart.removeAttribute(name);
  out.append(chart);
  return { text: `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(out)}\n`,
    width: outWidth, height: headHeight + y1 - y0 };
}

export function saveSvg(options) {
  download(fileName(options, 'svg'),
    new Blob([svgText(options.chart(), options.about?.())], { type: 'image/svg+xml' }));
}

export async function savePng(options) {
  const { text, width, height } = standalone(options.chart(), options.about?.());
  const scale = 2;
  const image = new Image();
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = width * scale;
  canvas.height = height * scale;
  const context = canvas.getContext('2d');
  context.scale(scale, scale);
  context.drawImage(image, 0, 0);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  download(fileName(options, 'png'), blob);
}

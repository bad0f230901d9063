// SPDX-License-Identifier: Apache-2.0
// Writes the files of web/export-buttons.js: CSV (RFC 4180: quoted where needed, CRLF
// lines), a chart as a standalone SVG (the page's CSS colours and fonts written into
// it, so it looks the same anywhere) and as a PNG (that SVG drawn at twice the size).
// Loaded on the first export.

/** One CSV field: quoted when it holds a comma, quote or line break. */
const field = (v) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
/** The CSV text of {head, rows}. */
export const csvText = ({ head, rows }) => [head, ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';

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

export function saveCsv({ name, csv }) {
  download(`${name}.csv`, new Blob([csvText(csv())], { type: 'text/csv' }));
}

const STYLE_PROPS = ['fill', 'stroke', 'stroke-width', 'stroke-dasharray', 'opacity', 'font-family', 'font-size',
  'font-weight'];

/** `svg` as standalone SVG text: computed styles inlined, the card's background behind it. */
export function svgText(svg) {
  const copy = svg.cloneNode(true);
  const from = [svg, ...svg.querySelectorAll('*')];
  const to = [copy, ...copy.querySelectorAll('*')];
  from.forEach((el, i) => {
    const style = getComputedStyle(el);
    for (const p of STYLE_PROPS) {
      const v = style.getPropertyValue(p);
      if ((v && v !== 'none') || p === 'fill') to[i].setAttribute(p, v);
    }
    to[i].removeAttribute('class');
    to[i].removeAttribute('tabindex');
  });
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const width = svg.getAttribute('width'), height = svg.getAttribute('height');
  const background = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  background.setAttribute('width', width);
  background.setAttribute('height', height);
  background.setAttribute('fill', getComputedStyle(svg.closest('.card') || document.body).backgroundColor);
  copy.prepend(background);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(copy)}\n`;
}

export function saveSvg({ name, chart }) {
  download(`${name}.svg`, new Blob([svgText(chart())], { type: 'image/svg+xml' }));
}

export async function savePng({ name, chart }) {
  const svg = chart();
  const text = svgText(svg);
  const scale = 2;
  const image = new Image();
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = Number(svg.getAttribute('width')) * scale;
  canvas.height = Number(svg.getAttribute('height')) * scale;
  const context = canvas.getContext('2d');
  context.scale(scale, scale);
  context.drawImage(image, 0, 0);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  download(`${name}.png`, blob);
}

// SPDX-License-Identifier: Apache-2.0
// Export buttons beside a chart or table: CSV of its values, and the chart as SVG or
// PNG. The buttons are built with the page; the code that writes the files
// (web/export.js) loads on the first click.
import { h } from './dom.js';

let loading;
const exporter = () => (loading ??= import('./export.js'));

/** @typedef {{head: any[], rows: any[][]} | {records: string}} CsvData */

/**
 * Buttons for one exportable thing. `name`: the file name without extension when there is
 * no `about`; `csv()`: {head, rows} of its values (or a promise of them, or of {records}, the
 * CSV records written elsewhere: web/export.js csvText); `chart()`: the <svg> element to save,
 * if any; `about()`: what it is of (web/export-about.js), written into every file, and the
 * file's name.
 * @param {{name: string, label: string, csv?: () => CsvData | Promise<CsvData>, chart?: () => Element,
 *   about?: () => import('./export-about.js').About}} options
 */
export function exportButtons({ name, label, csv, chart, about }) {
  const status = h('span', { class: 'status', role: 'status' });
  const run = (what) => () => exporter().then((m) => m[what]({ name, csv, chart, about })).catch((error) => {
    status.textContent = `Export failed: ${error.message}`;
  });
  return h('div', { class: 'actions export', role: 'group', 'aria-label': `Export ${label}` },
    h('span', { class: 'muted', text: 'Export' }),
    csv && h('button', { type: 'button', class: 'small', 'data-export': 'csv', 'aria-label': `${label} as CSV`,
      text: 'CSV', onclick: run('saveCsv') }),
    chart && h('button', { type: 'button', class: 'small', 'data-export': 'svg',
      'aria-label': `${label} chart as SVG`, text: 'SVG', onclick: run('saveSvg') }),
    chart && h('button', { type: 'button', class: 'small', 'data-export': 'png',
      'aria-label': `${label} chart as PNG`, text: 'PNG', onclick: run('savePng') }),
    status);
}

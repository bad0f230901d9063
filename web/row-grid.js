// SPDX-License-Identifier: Apache-2.0
// An editable list of rows as ONE keyboard stop: an ARIA grid with a roving tabindex.
// Tab enters the grid at the cell last used; arrow keys move between rows and cells
// (Left/Right leave an input only from its first/last character), Page Up/Down move
// ten rows, Ctrl+Home/End go to the first/last row. Rows are shown a page at a time
// (no scroll box inside the page): "Show more" adds a page, up to `maxShown`.
import { fill, h, int } from './dom.js';

/**
 * `columns`: [{title, cell(row, i) -> Element (an input or button, or a td's text)}].
 * Returns {root, render(rows)}; `render` keeps the focused cell where it was.
 */
export function rowGrid({ label, columns, empty, page = 20, maxShown = 300, moreNote }) {
  const body = h('tbody');
  const table = h('table', { class: 'rows-table', role: 'grid', 'aria-label': label },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'idx', text: '#' }),
      columns.map((c) => h('th', { scope: 'col', text: c.title })))), body);
  const more = h('div', { class: 'actions more' });
  const root = h('div', { class: 'rows' }, table, more);
  let shown = page;
  let rows = [];
  let active = { row: 0, col: 0 }; // the cell that holds tabindex=0

  const cellAt = (r, c) => body.rows[r]?.cells[c + 1]?.querySelector('input, button') ?? null;
  const count = () => body.querySelectorAll('tr[data-row]').length;
  function setActive(r, c, focus) {
    const n = count();
    if (!n) return;
    r = Math.max(0, Math.min(n - 1, r));
    c = Math.max(0, Math.min(columns.length - 1, c));
    cellAt(active.row, active.col)?.setAttribute('tabindex', '-1');
    active = { row: r, col: c };
    const el = cellAt(r, c);
    el?.setAttribute('tabindex', '0');
    if (focus) el?.focus();
  }

  table.addEventListener('focusin', (e) => {
    const td = e.target.closest('td');
    const tr = td?.parentElement;
    if (!tr?.dataset.row) return;
    setActive(tr.sectionRowIndex, td.cellIndex - 1, false);
  });
  table.addEventListener('keydown', (e) => {
    const el = e.target;
    if (!el.closest('td')) return;
    const isInput = el.tagName === 'INPUT';
    const atStart = !isInput || (el.selectionStart === 0 && el.selectionEnd === 0);
    const atEnd = !isInput || (el.selectionStart === el.value.length && el.selectionEnd === el.value.length);
    const { row, col } = active;
    const to = {
      ArrowUp: [row - 1, col], ArrowDown: [row + 1, col], PageUp: [row - 10, col], PageDown: [row + 10, col],
      ArrowLeft: atStart ? [row, col - 1] : null, ArrowRight: atEnd ? [row, col + 1] : null,
      Home: e.ctrlKey ? [0, col] : null, End: e.ctrlKey ? [count() - 1, col] : null,
    }[e.key];
    if (!to) return;
    e.preventDefault();
    setActive(to[0], to[1], true);
  });

  function render(list) {
    rows = list;
    const hadFocus = table.contains(document.activeElement);
    const limit = Math.min(rows.length, shown, maxShown);
    fill(body, ...rows.slice(0, limit).map((row, i) => h('tr', { 'data-row': i, 'aria-rowindex': i + 2 },
      h('td', { class: 'idx', text: int(i + 1) }),
      columns.map((c) => {
        const el = c.cell(row, i);
        if (el instanceof Element && /^(INPUT|BUTTON)$/.test(el.tagName)) el.setAttribute('tabindex', '-1');
        return h('td', { class: c.className || null }, el);
      }))));
    table.setAttribute('aria-rowcount', rows.length + 1);
    if (!limit) body.append(h('tr', {}, h('td', { colspan: columns.length + 1, class: 'muted', text: empty })));
    setActive(Math.min(active.row, limit - 1), active.col, hadFocus);
    const left = Math.min(rows.length, maxShown) - limit;
    fill(more, 
      left > 0 ? h('button', { type: 'button', text: `Show ${int(Math.min(page * 2.5, left))} more`, onclick: () => {
        shown = limit + Math.min(page * 2.5, left);
        render(rows);
      } }) : null,
      limit > page ? h('button', { type: 'button', text: 'Show fewer', onclick: () => {
        shown = page;
        render(rows);
      } }) : null,
      rows.length > limit
        ? h('span', { class: 'muted', text: `${int(limit)} of ${int(rows.length)} shown; all are priced.` +
          (rows.length > maxShown && moreNote ? ` ${moreNote}` : '') })
        : null);
  }
  return { root, render, table };
}

// SPDX-License-Identifier: Apache-2.0
// DOM and number-format helpers. Text goes in through textContent, never innerHTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(el, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value == null || value === false) continue;
    if (key === 'text') el.textContent = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key === 'className' ? 'class' : key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/**
 * Replaces `el`'s children with `children`, skipping null, undefined and false as h() does
 * (replaceChildren would show them as the text "null" or "false"). Arrays are flattened.
 * @param {Element} el @param {...any} children
 */
export function fill(el, ...children) {
  el.replaceChildren();
  build(el, null, children);
}

/** An HTML element: h('td', {class: 'num'}, 'text', childNode). */
export const h = (tag, props, ...children) => build(document.createElement(tag), props, children);
/** An SVG element. */
export const svg = (tag, props, ...children) => build(document.createElementNS(SVG_NS, tag), props, children);
export const $ = (selector, root = document) => root.querySelector(selector);

/**
 * A link to the rendered page of docs/`name`.md (web/dist/docs/, scripts/build-docs.mjs), in a
 * new tab: the documentation as a document, not its Markdown.
 */
export const docLink = (name, text = `docs/${name}.md`) =>
  h('a', { href: `web/dist/docs/${name}.html`, target: '_blank', rel: 'noopener', text });

/** `text` (a core's message, say) with each "docs/NAME.md" in it a link to that page. */
export const withDocLinks = (text) => String(text).split(/\b(docs\/[A-Z][A-Z-]*\.md)/)
  .map((part, i) => (i % 2 ? docLink(part.slice(5, -3), part) : part));

/** A labelled input: returns {wrap, input}. `props` go to the input. */
export function field(label, props = {}, hint) {
  const input = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', ...props });
  const wrap = h('label', { class: 'field' }, h('span', { class: 'label' }, label), input,
    hint && h('small', { text: hint }));
  return { wrap, input };
}

/** Resolves after the next paint: a task after the next animation frame's callbacks. */
export const nextPaint = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

// One number format everywhere: en-US grouping ("55,011"), times in µs below 1 ms and
// in ms (or s) above, three significant digits unless the value is whole microseconds.
// Made on first use, not while the page's script is evaluated: a page's first NumberFormat sets
// up the browser's number formatting (~10 ms; web/app.js has it made while the module compiles).
let group;
/** 55011 -> "55,011". */
export const int = (n) => (group ??= new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })).format(n);
// One formatter per number of decimals, made once: toLocaleString with options makes a new one
// on every call, which took most of the time of drawing a 2,000-row lookup table.
const decimals = [];
/** A number with `digits` decimals and grouping: 1234.5 -> "1,234.5". */
export const fixed = (n, digits) => (decimals[digits] ??= new Intl.NumberFormat('en-US',
  { minimumFractionDigits: digits, maximumFractionDigits: digits })).format(n);
/** Seconds as a short human time: "55.0 ms", "930 µs", "3.20 ms", "1.27 s". */
export function time(seconds) {
  const us = seconds * 1e6;
  const a = Math.abs(us);
  if (a >= 1e6) return `${fixed(us / 1e6, a >= 1e7 ? 1 : 2)} s`;
  if (a >= 1e3) return `${fixed(us / 1e3, a >= 1e5 ? 0 : a >= 1e4 ? 1 : 2)} ms`;
  return `${fixed(us, a >= 100 || Number.isInteger(us) ? 0 : 1)} µs`;
}
/** Microseconds as a human time: 55011 -> "55.0 ms". */
export const timeUs = (us) => time(us * 1e-6);
/** A signed time difference: "+4.27 ms", "−930 µs", "0 µs". */
export const deltaTime = (seconds) => (seconds > 0 ? '+' : seconds < 0 ? '−' : '') + time(Math.abs(seconds));
/** A ratio as a percentage with sensible digits. */
export const pct = (r) => `${fixed(r * 100, Math.abs(r) >= 0.1 ? 1 : 2)}%`;
/** A signed percentage: "+7.77%". */
export const deltaPct = (r) => (r > 0 ? '+' : r < 0 ? '−' : '') + pct(Math.abs(r));
/** Token counts: 2048 -> "2,048", 131072 -> "128k" when short is asked. */
export const tokens = (n, short) => (short && n >= 1024 && n % 1024 === 0 ? `${n / 1024}k` : int(n));

/**
 * A number as a person types it: "1,000", "1_000", " 2048 ", "0.82", "1e3". Commas
 * are thousands separators only in groups of three ("1,5" is not a number). NaN when
 * it is not a number.
 */
export function parseNumber(text) {
  let t = String(text).trim().replace(/_/g, '');
  if (/^[-+]?\d{1,3}(,\d{3})+(\.\d*)?$/.test(t)) t = t.replace(/,/g, '');
  return t !== '' && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) ? Number(t) : NaN;
}

/** Parses what the user typed: a finite number, or the text itself (the core names the error). */
export function parseTyped(text) {
  const v = parseNumber(text);
  return Number.isFinite(v) ? v : text;
}

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

/** An HTML element: h('td', {class: 'num'}, 'text', childNode). */
export const h = (tag, props, ...children) => build(document.createElement(tag), props, children);
/** An SVG element. */
export const svg = (tag, props, ...children) => build(document.createElementNS(SVG_NS, tag), props, children);
export const $ = (selector, root = document) => root.querySelector(selector);

/** A labelled input: returns {wrap, input}. `props` go to the input. */
export function field(label, props = {}, hint) {
  const input = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', spellcheck: 'false', ...props });
  const wrap = h('label', { class: 'field' }, h('span', { class: 'label' }, label), input, hint && h('small', { text: hint }));
  return { wrap, input };
}

const group = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
/** 55011 -> "55,011". */
export const int = (n) => group.format(n);
/** Seconds as a short human time: "51.8 ms", "930 us". */
export function time(seconds) {
  const us = seconds * 1e6;
  if (us >= 1e5) return `${(us / 1e3).toFixed(0)} ms`;
  if (us >= 1e3) return `${(us / 1e3).toFixed(us >= 1e4 ? 1 : 2)} ms`;
  return `${us.toFixed(us >= 100 ? 0 : 1)} us`;
}
/** A ratio as a percentage with sensible digits. */
export const pct = (r) => `${(r * 100).toFixed(Math.abs(r) >= 0.1 ? 1 : 2)}%`;
/** Token counts: 2048 -> "2,048", 131072 -> "128k" when short is asked. */
export const tokens = (n, short) => (short && n >= 1024 && n % 1024 === 0 ? `${n / 1024}k` : int(n));

/** Parses what the user typed: a finite number, or the text itself (the core names the error). */
export function parseTyped(text) {
  const t = text.trim().replace(/_/g, '');
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : text;
}

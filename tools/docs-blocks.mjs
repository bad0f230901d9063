// SPDX-License-Identifier: Apache-2.0
// Generated blocks of README.md, docs/*.md and index.html (its kernel-pack preloads). The text between
//   <!-- generated:NAME -->  and  <!-- /generated:NAME -->
// is written by the generator NAME (tools/docs-facts.mjs, docs-tables.mjs, result-fields.mjs)
// from the build (build/stepcalc) and the repository, never by hand. A marker that ends its
// line opens a block of whole lines, indented like the marker (so a block can sit in a list
// item); a marker after words on its line holds one line of text (a figure in a sentence).
//   node tools/docs-blocks.mjs --write [FILE...]   rewrites every block (`npm run docs`)
//   node tools/docs-blocks.mjs --check [FILE...]   exit 1 naming each stale, unknown or broken block
//   node tools/docs-blocks.mjs --list              the generators
// Generators are deterministic (CLI results, counts, the catalogue, checked-in data), so
// `npm test` runs --check. Timings and build sizes move between machines: they live in
// BENCHMARKS.md (`npm run bench`), and the documents link there instead.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DocsContext } from './docs-context.mjs';
import { facts } from './docs-facts.mjs';
import { tables } from './docs-tables.mjs';
import { resultFieldBlocks } from './result-fields.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** @typedef {(ctx: DocsContext) => string} Generator */
/** @type {Record<string, Generator>} */
export const GENERATORS = { ...facts, ...tables, ...resultFieldBlocks };

/**
 * @typedef {{name: string, line: number, start: number, end: number, inline: boolean, indent: string,
 *   content: string}} Block
 * @typedef {{file: string, line: number, name: string, problem: string}} Problem
 */

const MARKER = /<!-- (\/?)generated:([a-z0-9-]+) -->/g;
const lineOf = (/** @type {string} */ text, /** @type {number} */ index) => text.slice(0, index).split('\n').length;

/**
 * The blocks of `text`, in order, and what is wrong with its markers.
 * @param {string} text
 * @returns {{blocks: Block[], problems: {line: number, name: string, problem: string}[]}}
 */
export function findBlocks(text) {
  /** @type {Block[]} */
  const blocks = [];
  const problems = [];
  /** @type {{name: string, index: number, after: number} | null} */
  let open = null;
  for (const m of text.matchAll(MARKER)) {
    const [marker, slash, name] = m;
    const index = /** @type {number} */ (m.index);
    if (!slash) {
      if (open) problems.push({ line: lineOf(text, open.index), name: open.name, problem: 'is not closed' });
      open = { name, index, after: index + marker.length };
      continue;
    }
    if (!open || open.name !== name) {
      problems.push({ line: lineOf(text, index), name, problem: 'closes a block that is not open' });
      continue;
    }
    const lineStart = text.lastIndexOf('\n', open.index) + 1;
    const before = text.slice(lineStart, open.index);
    const closeLine = text.slice(text.lastIndexOf('\n', index - 1) + 1, index);
    const inline = !(text[open.after] === '\n' && /^[ \t]*$/.test(closeLine));
    if (inline && /^[ \t]*$/.test(before)) {
      problems.push({ line: lineOf(text, open.index), name, problem: 'is a one-line block at the start of a line, ' +
        'where Markdown would end the paragraph (an HTML block): put words before it' });
    }
    blocks.push({ name, line: lineOf(text, open.index), start: open.after, end: index, inline,
      indent: /^[ \t]*$/.test(before) ? before : '', content: text.slice(open.after, index) });
    open = null;
  }
  if (open) problems.push({ line: lineOf(text, open.index), name: open.name, problem: 'is not closed' });
  return { blocks, problems };
}

/**
 * The text a block must hold for `generated` (the generator's output).
 * @param {Block} block
 * @param {string} generated
 */
export function blockText(block, generated) {
  if (block.inline) {
    if (generated.includes('\n')) throw new Error('its generator wrote several lines into a one-line block');
    return generated;
  }
  const lines = generated.split('\n').map((l) => (l ? block.indent + l : l));
  return `\n${lines.join('\n')}\n${block.indent}`;
}

/**
 * Regenerates every block of `text`. Returns the new text and the problems: markers that do
 * not pair, unknown generators, generators that failed, and (as `stale`) blocks whose text
 * differs from what their generator writes.
 * @param {string} text
 * @param {DocsContext} ctx
 * @param {Record<string, Generator>} [generators]
 */
export function regenerate(text, ctx, generators = GENERATORS) {
  const { blocks, problems } = findBlocks(text);
  /** @type {{line: number, name: string, problem: string, expected?: string, found?: string}[]} */
  const found = [...problems];
  let out = '';
  let at = 0;
  for (const block of blocks) {
    const generator = generators[block.name];
    if (!generator) {
      found.push({ line: block.line, name: block.name, problem: 'has no generator (tools/docs-blocks.mjs --list)' });
      continue;
    }
    let expected;
    try {
      expected = blockText(block, generator(ctx));
    } catch (error) {
      found.push({ line: block.line, name: block.name, problem: `cannot be generated: ${error.message}` });
      continue;
    }
    if (expected !== block.content) {
      found.push({ line: block.line, name: block.name, problem: 'is stale', expected, found: block.content });
    }
    out += text.slice(at, block.start) + expected;
    at = block.end;
  }
  return { text: out + text.slice(at), problems: found.sort((a, b) => a.line - b.line) };
}

/** README.md, docs/*.md and index.html (its preloads) of `root`. @param {string} root */
export function docFiles(root) {
  return ['README.md', 'index.html', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort()
    .map((f) => `docs/${f}`)].map((f) => path.join(root, f));
}

/**
 * Checks (or, with `write`, rewrites) `files`. Returns every problem; with `write`, stale
 * blocks are rewritten and not reported.
 * @param {string[]} files
 * @param {{root?: string, write?: boolean, generators?: Record<string, Generator>}} [options]
 * @returns {(Problem & {expected?: string, found?: string})[]}
 */
export function processFiles(files, { root = ROOT, write = false, generators = GENERATORS } = {}) {
  const ctx = new DocsContext(root);
  const all = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const { text: next, problems } = regenerate(text, ctx, generators);
    const shown = path.relative(process.cwd(), file) || file;
    for (const p of problems) {
      if (write && p.problem === 'is stale') continue;
      all.push({ file: shown, ...p });
    }
    if (write && next !== text) {
      writeFileSync(file, next);
      console.log(`docs-blocks: rewrote ${shown}`);
    }
  }
  return all;
}

/** The first line where `expected` and `found` differ, both shown. @param {string} expected @param {string} found */
function firstDifference(expected, found) {
  const a = expected.split('\n');
  const b = found.split('\n');
  const i = a.findIndex((line, k) => line !== b[k]);
  const at = i < 0 ? a.length : i;
  const cut = (/** @type {string | undefined} */ s) => (s === undefined ? '(nothing)' : s.trim().slice(0, 160));
  const label = `block line ${at + 1}: `;
  return `    ${label}expected ${cut(a[at])}\n    ${' '.repeat(label.length)}found    ${cut(b[at])}`;
}

function main() {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    for (const name of Object.keys(GENERATORS).sort()) console.log(name);
    return;
  }
  const write = args.includes('--write');
  if (!write && !args.includes('--check')) {
    console.error('usage: node tools/docs-blocks.mjs --check|--write [FILE...] | --list');
    process.exit(2);
  }
  const named = args.filter((a) => !a.startsWith('--')).map((f) => path.resolve(f));
  const files = named.length ? named : docFiles(ROOT);
  const problems = processFiles(files, { write });
  for (const p of problems) {
    console.log(`${p.file}:${p.line}: block ${p.name} ${p.problem}`);
    if (p.expected !== undefined) console.log(firstDifference(p.expected, p.found ?? ''));
  }
  if (problems.length) {
    console.log(`docs-blocks: ${problems.length} problem${problems.length === 1 ? '' : 's'}` +
      (write ? '' : '; `npm run docs` rewrites stale blocks'));
    process.exit(1);
  }
  console.log(`docs-blocks: ${files.length} files, every block as its generator writes it`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();

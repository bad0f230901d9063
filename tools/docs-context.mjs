// SPDX-License-Identifier: Apache-2.0
// What the generators of tools/docs-blocks.mjs read, and the few formats their blocks
// share: the native CLI (build/stepcalc; each distinct call runs once and is cached), the
// repository's files, and the page's default state (web/state.js, imported as the page
// imports it, so the documents price exactly the step a fresh page shows).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { int } from '../web/dom.js';
import { defaultState, encodeHash, toRequest } from '../web/state.js';
import { useCatalogue } from '../web/catalogue.js';

export { int, pct, time, timeUs } from '../web/dom.js';

/** The repository as the generators see it; `root` holds build/stepcalc and the data. */
export class DocsContext {
  /** @param {string} root */
  constructor(root) {
    this.root = root;
    /** @type {Map<string, string>} */
    this.cache = new Map();
  }

  /**
   * stdout of `build/stepcalc ...args` with `input` on stdin. Exit 0, or exit 2 with an
   * answer on stdout (an error value, or a batch in which some request failed).
   * @param {string[]} args
   * @param {string} [input]
   */
  cli(args, input = '') {
    const key = JSON.stringify([args, input]);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const exe = path.join(this.root, 'build/stepcalc');
    if (!existsSync(exe)) throw new Error('build/stepcalc is missing: run `npm run build` first');
    const run = spawnSync(exe, args, { cwd: this.root, input, encoding: 'utf8', maxBuffer: 1 << 28 });
    if (run.status !== 0 && !(run.status === 2 && run.stdout.trim())) {
      throw new Error(`stepcalc ${args.join(' ')}: exit ${run.status}: ${String(run.stderr).trim()}`);
    }
    this.cache.set(key, run.stdout);
    return run.stdout;
  }

  /**
   * The CLI's JSON answer; `input` is sent as JSON unless it is text already.
   * @param {string[]} args
   * @param {unknown} [input]
   * @returns {any}
   */
  json(args, input = '') {
    return JSON.parse(this.cli(args, typeof input === 'string' ? input : JSON.stringify(input)));
  }

  /**
   * `stepcalc price` of one request (extra CLI flags before the file); an error value throws.
   * @param {object} request
   * @param {string[]} [flags]
   * @returns {any}
   */
  price(request, flags = []) {
    const result = this.json(['price', ...flags, '-'], request);
    if (result.error) throw new Error(`stepcalc price: ${result.error.path}: ${result.error.message}`);
    return result;
  }

  /** @returns {any} `stepcalc catalogue` */
  catalogue() {
    return this.json(['catalogue']);
  }

  /** @returns {any} `stepcalc presets` */
  presets() {
    return this.json(['presets']);
  }

  /** @param {string} rel a path in the repository */
  read(rel) {
    return readFileSync(path.join(this.root, rel), 'utf8');
  }

  /**
   * @param {string} rel
   * @returns {any}
   */
  readJson(rel) {
    return JSON.parse(this.read(rel));
  }

  /**
   * The page's default state (web/state.js), its request in the CLI's format and its link
   * (whose hardware keys and default mode the page reads from the core's catalogue, as here).
   */
  page() {
    useCatalogue(this.catalogue());
    const state = defaultState();
    return { state, request: toRequest(state), hash: encodeHash(state) };
  }
}

const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven',
  'twelve'];
/** A count in words up to twelve, in digits above. @param {number} n */
export const count = (n) => WORDS[n] ?? int(n);

/** "A, B and C". @param {string[]} items @param {string} [last] */
export function list(items, last = 'and') {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;
}

/** `text` in backticks. @param {string | number} text */
export const code = (text) => `\`${text}\``;

/**
 * A Markdown table; `right` marks the columns aligned right (numbers).
 * @param {string[]} head
 * @param {(string | number)[][]} rows
 * @param {boolean[]} [right]
 */
export function table(head, rows, right = []) {
  const line = (/** @type {(string | number)[]} */ cells) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (right[i] ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

/** Lines of a data file (CSV) without its header and blank lines. @param {string} text */
export const dataLines = (text) => text.split('\n').filter((l) => l.trim() !== '').slice(1);

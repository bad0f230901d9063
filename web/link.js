// SPDX-License-Identifier: Apache-2.0
// The page's state from what arrives from outside: the location hash (compact form or
// a `#json=` request in the CLI's format) and imported request objects. Config models
// are reduced by the core to the shape it prices; every state is priced once (at summary
// detail: the core's checks, not its result) before it is accepted, so a link that cannot
// be priced is refused as a whole. A big step is checked in the pricing worker (web/pricer.js).
import { decodeHash, defaultState, fromRequest, toRequest } from './state.js';
import { trimConfig } from './model-shape.js';
import { requestFromText, derivedName } from './intake.js';
import { inUserWords } from './words.js';
import { catalogue } from './catalogue.js';

/** A state from a request object (CLI format); config models are trimmed by the core. */
export function stateFromRequest(calc, request) {
  const s = fromRequest(request);
  if (typeof s.model === 'object') {
    s.modelName = s.modelName || derivedName(s.model, catalogue.limits.string_bytes);
    s.model = /** @type {any} */ (trimConfig(calc, s.model)); // a shape object, not a preset name
  }
  return s;
}

/**
 * Prices `request` to check it, in the pricing worker when it is big; a measured request
 * whose GPU tables are not loaded yet passed every check of its own (the core refuses bad
 * input before it looks for tables) and counts as good: the page loads the tables and
 * prices it then.
 */
async function check(calc, pricer, request) {
  try {
    await (pricer?.big(request) ? pricer.summary(request) : calc.price(request, { detail: 'summary' }));
  } catch (error) {
    if (error.code !== 'kernels_not_loaded') throw error;
  }
}

/**
 * The state `hash` asks for: {state, pinned} (state null when the hash holds none;
 * pinned the A of a comparison, or null) or {error} in the page's words, with `offer`:
 * the link's own state when it decodes but does not price, to be shown with its
 * errors marked if the user asks. Nothing is thrown but the pricing worker's 'cancelled'
 * (a newer edit came while it checked a big step: the link is dropped).
 * @param {any} calc @param {ReturnType<typeof import('./pricer.js').createPricer> | null} pricer
 * @param {string} hash
 */
export async function stateFromHash(calc, pricer, hash) {
  let offer = null;
  let decoded;
  try {
    decoded = decodeHash(hash);
  } catch (error) {
    // What the link's own form says is wrong is in words already ("The link's TP "abc" is
    // not a whole number."): no label before it, no path after it.
    return { error: `This link's step cannot be shown: ${error.message.charAt(0).toLowerCase()}` +
      `${error.message.slice(1)}`, offer };
  }
  if (!decoded) return { state: null };
  try {
    // A #json= request is checked by the core as written (intake.js), as imports are:
    // unknown fields, repeated keys, ids, tags and numbers JSON.parse would round.
    const s = decoded.state ? decoded.state
      : stateFromRequest(calc, (await requestFromText(calc, pricer, decoded.text)).request);
    offer = s;
    if (decoded.state && typeof s.model === 'object') s.model = trimConfig(calc, s.model);
    await check(calc, pricer, toRequest(s));
    const a = decoded.pinned ?? null;
    if (a) {
      try {
        if (typeof a.model === 'object') a.model = trimConfig(calc, a.model);
        await check(calc, pricer, toRequest(a));
      } catch (error) {
        if (error.code === 'cancelled') throw error;
        const why = error.path ? inUserWords(error.path, error.message) : error.message;
        throw Object.assign(new Error(`The pinned A cannot be priced: ${why}`), { path: 'a' });
      }
    }
    return { state: s, pinned: a };
  } catch (error) {
    if (error.code === 'cancelled') throw error;
    // The page's words; a `#json=` link is JSON someone wrote, so also the path it can be
    // fixed at (a compact link has no JSON paths: the words name the field).
    const words = error.path ? inUserWords(error.path, error.message) : error.message;
    const why = 'text' in decoded && error.path && !words.includes(error.path)
      ? `${words.replace(/\.$/, '')} (at ${error.path}).` : words;
    return { error: `This link's step cannot be shown: ${why}`, offer };
  }
}

export { defaultState };

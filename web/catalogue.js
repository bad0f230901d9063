// SPDX-License-Identifier: Apache-2.0
// The facts the core owns (limits, request fields, model-config fields and notes,
// sweep axes, switch texts): calc.catalogue(), handed over once by app.js right after
// load(). The page reads them here and never retypes them.

/** @type {import('../wasm/stepcalc.js').Catalogue} */
export const catalogue = /** @type {any} */ ({});

/** Makes `facts` (calc.catalogue()) the page's catalogue; called once after load(). */
export function useCatalogue(facts) {
  Object.assign(catalogue, facts);
}

/** The resolved model's shape fields, in the order the link form keeps them. */
export const shapeFields = () => catalogue.model_config.shape_fields;

/** Config keys the core reads only for its notes (MoE, MLA, sliding window, head_dim). */
export const noteFields = () => catalogue.model_config.notes.flatMap((n) => n.keys);

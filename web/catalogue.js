// SPDX-License-Identifier: Apache-2.0
// The facts the core owns (limits, request fields, model-config fields and notes,
// sweep axes, switch texts, modes): calc.catalogue(), handed over once by app.js right
// after load(). The page reads them here and never retypes them.
//
// Panels bundled on their own (calibrate-panel.js, serving.js) get a copy of this
// module without the catalogue: they ask the module for it (calc.catalogue()).

/** @typedef {import('../wasm/stepcalc.js').Mode} Mode */

/** @type {import('../wasm/stepcalc.js').Catalogue} */
export const catalogue = /** @type {any} */ ({});

/**
 * The modes the page has behaviour of its own for, by what they are to it: the reference
 * model (its figure is shown beside any other mode's, and calibration starts from it), the
 * mode with switches and fitted CPU parameters (calibration fits it), and the mode priced
 * from measured kernel tables (the page starts in it: the most accurate, docs/ACCURACY.md).
 * Every other use of a mode name comes from the catalogue; useCatalogue checks these are
 * among its modes, so a mode the core renames or drops fails on load instead of never
 * matching.
 * @type {Readonly<{reference: Mode, corrected: Mode, measured: Mode}>}
 */
export const MODE = Object.freeze({ reference: 'blis-v2', corrected: 'corrected', measured: 'measured' });

/** The names of MODE that `facts.modes` lacks. */
export const missingModes = (facts) => Object.values(MODE).filter((m) => !facts.modes.some((f) => f.name === m));

/**
 * Makes `facts` (calc.catalogue()) the page's catalogue; called once after load().
 * Throws when the page names a mode the core does not have.
 */
export function useCatalogue(facts) {
  const missing = missingModes(facts);
  if (missing.length) {
    throw new Error(`The page knows modes the core does not have: ${missing.join(', ')} ` +
      `(the core's modes: ${facts.modes.map((m) => m.name).join(', ')}).`);
  }
  Object.assign(catalogue, facts);
}

/** The mode of a request (or link) that names none: the core's default. */
export const defaultMode = () => catalogue.default_mode;

/** The resolved model's shape fields, in the order the link form keeps them. */
export const shapeFields = () => catalogue.model_config.shape_fields;

/** Config keys the core reads only for its notes (MoE, MLA, sliding window, head_dim). */
export const noteFields = () => catalogue.model_config.notes.flatMap((n) => n.keys);

/** Config keys the measured mode reads beyond the shape: {merged, top_only} (model-shape.js). */
export const specKeys = () => catalogue.model_config.spec_keys;

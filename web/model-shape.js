// SPDX-License-Identifier: Apache-2.0
// A model as the page keeps it in its state: a preset name, or the shape the core
// resolves a config to (with the config keys its notes read). Used by the links
// (link.js) and the Model panel alike, so neither depends on the other.
import { shapeFields, noteFields, specKeys } from './catalogue.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A config reduced to what prices it: the shape the core resolves, the keys its notes read
 * and the keys the measured mode reads (experts, latent attention, the weights' format, the
 * context, windows: catalogue `spec_keys`), text_config's over the top level's as the core
 * merges them. It prices as the config does in every mode. Throws StepCalcError.
 */
export function trimConfig(calc, config) {
  const resolved = calc.resolveModel(config);
  const shape = {};
  for (const key of shapeFields()) shape[key] = resolved[key];
  const { merged, top_only: topOnly } = specKeys();
  const keep = [...noteFields(), ...merged];
  for (const view of [config, config.text_config]) {
    if (!isObject(view)) continue;
    for (const key of keep) if (view[key] !== undefined && view[key] !== null) shape[key] = view[key];
  }
  for (const key of topOnly) if (config[key] !== undefined) shape[key] = config[key];
  return shape;
}

/**
 * The preset (of `presets`, calc.presets()) whose shape, notes and spec (experts, the
 * weights' format, ...: what the measured mode reads) equal `shape`'s (a trimmed `config`),
 * or '': a quantized checkpoint of a preset's model is not that preset.
 */
export function matchingPreset(calc, presets, shape, config) {
  const facts = (model) => {
    const resolved = calc.resolveModel(model);
    return JSON.stringify([resolved.notes.map((w) => w.code).sort(), resolved.spec]);
  };
  for (const p of presets.models) {
    if (!shapeFields().every((k) => p[k] === shape[k])) continue;
    try {
      if (facts(p.name) === facts(config)) return p.name;
    } catch {
      // a preset the core refuses here is no match
    }
  }
  return '';
}

// SPDX-License-Identifier: Apache-2.0
// A model as the page keeps it in its state: a preset name, or the shape the core
// resolves a config to (with the config keys its notes read). Used by the links
// (link.js) and the Model panel alike, so neither depends on the other.
import { shapeFields, noteFields } from './catalogue.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A config reduced to the shape the core resolves plus its note keys; throws StepCalcError. */
export function trimConfig(calc, config) {
  const resolved = calc.resolveModel(config);
  const shape = {};
  for (const key of shapeFields()) shape[key] = resolved[key];
  for (const view of [config, config.text_config]) {
    if (!isObject(view)) continue;
    for (const key of noteFields()) if (view[key] !== undefined) shape[key] = view[key];
  }
  return shape;
}

/** The preset (of `presets`, calc.presets()) whose shape and notes equal `shape` (a trimmed `config`), or ''. */
export function matchingPreset(calc, presets, shape, config) {
  const notes = (model) => JSON.stringify(calc.resolveModel(model).notes.map((w) => w.code).sort());
  for (const p of presets.models) {
    if (!shapeFields().every((k) => p[k] === shape[k])) continue;
    try {
      if (notes(p.name) === notes(config)) return p.name;
    } catch {
      // a preset the core refuses here is no match
    }
  }
  return '';
}

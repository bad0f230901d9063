// SPDX-License-Identifier: Apache-2.0
// Every way a request or a config enters the page (a #json= link, JSON Import, an
// opened request file, a pasted, opened or dropped config.json) goes through here:
// the core checks the text as written (repeated keys, unknown fields in any object,
// ids, tags, names and numbers JSON.parse would round or drop), so the page accepts
// exactly what `stepcalc price` accepts. Errors are StepCalcError {code, path, message}.
import { StepCalcError } from '../wasm/stepcalc.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** JSON.parse, with its complaint as a StepCalcError `parse_error` saying `what`. */
function parse(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new StepCalcError('parse_error', '', `${what}: ${error.message}`);
  }
}

/**
 * The core's check of JSON text as written: priced at summary detail, which refuses what
 * the full result would; throws the core's error, with its path. A measured request whose GPU
 * tables are not loaded yet passed every check of its own (the core refuses bad input before
 * it looks for tables).
 * @param {(text: string) => any} price calc.price at summary detail, on the page or in the pricing worker
 */
async function checkText(price, text) {
  try {
    await price(text);
  } catch (error) {
    if (error?.code !== 'kernels_not_loaded') throw error;
  }
}

/**
 * A request object from JSON text, after the core has checked the text as written; long
 * text (a big step) is checked in the pricing worker (web/pricer.js). Returns {request}, the
 * parsed request (a preset given by its HuggingFace id named as the preset).
 * @param {any} calc @param {ReturnType<typeof import('./pricer.js').createPricer> | null} pricer
 * @param {string} text
 */
export async function requestFromText(calc, pricer, text) {
  await checkText(pricer?.bigText(text) ? pricer.summary : (t) => calc.price(t, { detail: 'summary' }), text);
  const request = parse(text, 'The request is not valid JSON');
  if (typeof request.model === 'string') request.model = calc.resolveModel(request.model).preset;
  return { request };
}

/** The config's display name: `_name_or_path`, `name` or `model_type`. */
/** @type {(c: any) => string} */
export const configName = (c) => [c._name_or_path, c.name, c.model_type].find((v) => typeof v === 'string' && v) ||
  'config.json';

/**
 * The name a request's config model is shown under when the request gives none: its
 * configName cut to `maxBytes` of UTF-8 (the core's string limit), since the request
 * itself is valid and the page must not refuse what `stepcalc price` accepts.
 */
export function derivedName(config, maxBytes) {
  const name = configName(config);
  const bytes = new TextEncoder().encode(name);
  if (bytes.length <= maxBytes) return name;
  return new TextDecoder().decode(bytes.subarray(0, maxBytes)).replace(/\uFFFD$/, '');
}

/**
 * A HuggingFace config object from its text, checked by the core as written (inside
 * a request with an empty step) together with the name the page will show for it
 * (`givenName`, else the config's own). Returns {config, name}; errors name the config's
 * field (`model.` is dropped).
 */
export function configFromText(calc, text, givenName) {
  const config = parse(text, 'This is not a config.json');
  if (!isObject(config)) throw new StepCalcError('type_error', '',
    'This is not a config.json: it holds one JSON object.');
  const name = givenName || configName(config);
  // `text` is one JSON value (it parsed), so splicing it in cannot add other fields.
  try {
    calc.price(`{"model":${text},"model_name":${JSON.stringify(name)},"step":{}}`);
  } catch (error) {
    if (!(error instanceof StepCalcError)) throw error;
    const field = ['_name_or_path', 'name', 'model_type'].find((k) => config[k] === name) ?? 'name';
    const path = error.path === 'model_name' ? field : error.path.replace(/^model\.?/, '');
    throw new StepCalcError(error.code, path, error.message.replace(/\bmodel_name\b/, field));
  }
  return { config, name };
}

// SPDX-License-Identifier: Apache-2.0
// The Model panel's Hugging Face box (a bundle of its own, loaded when the box is first
// used): a model id, or a huggingface.co link, becomes the model's config.json, fetched by
// the user's own browser straight from huggingface.co (no server of ours in between) and used
// as a pasted config is. A ModelOpt checkpoint's hf_quant_config.json, when the repository has
// one, is folded into the config's quantization_config as tools/validate-ledger.mjs folds it.
// Every failure is said in words at the box, with how to paste the file instead; the shown
// model is never touched by a failure, and an answer to an earlier id or for a model the user
// has since replaced is dropped.
import { h, fill } from './dom.js';
import { setFieldError, clearFieldError } from './errors.js';

export const HUB = 'https://huggingface.co';
/** The largest config.json (or hf_quant_config.json) read: configs are a few KB. */
export const MAX_BYTES = 1 << 20;
/** The longest organisation or model name the Hub allows. */
const MAX_NAME = 96;
const LABEL = 'Hugging Face model id';
const EXAMPLE = 'Qwen/Qwen2.5-7B-Instruct';

/** A failure in words: `parts` are strings and {href, text} links. */
export class HubError extends Error {
  constructor(parts) {
    super(parts.map((p) => (typeof p === 'string' ? p : p.text)).join(''));
    this.parts = parts;
  }
}

/** One segment of an id: word characters, "-" and "."; a word character at each end; no "--" or "..". */
const validSegment = (s) => s.length <= MAX_NAME && /^\w(?:[\w.-]*\w)?$/.test(s) && !/--|\.\./.test(s);

/**
 * The model id in what was typed: "org/name", or a huggingface.co (or hf.co) link to the
 * model or to a file of it. Returns {id, name}: `name` the id's last segment in lower case,
 * as the core names a preset from its Hub id. Throws an Error naming the field.
 */
export function parseHubId(typed) {
  let text = String(typed).trim();
  if (!text) throw new Error(`${LABEL}: type one, such as ${EXAMPLE}.`);
  if (text.length > 2 * MAX_NAME + 200) {
    throw new Error(`${LABEL}: ${text.length} characters is too long for a model id (at most ${MAX_NAME} ` +
      'for the organisation and for the name).');
  }
  const quoted = `"${text.length > 60 ? `${text.slice(0, 60)}…` : text}"`;
  if (/^(https?:\/\/)?(www\.)?(huggingface\.co|hf\.co)(\/|$)/i.test(text)) {
    const url = new URL(/^https?:/i.test(text) ? text : `https://${text}`);
    const parts = url.pathname.split('/').filter(Boolean);
    // Links to a model's files (…/tree/main, …/blob/main/config.json, …/resolve/main/…) name it first.
    const cut = parts.findIndex((p) => ['tree', 'blob', 'resolve', 'raw', 'discussions', 'commits'].includes(p));
    text = (cut >= 0 ? parts.slice(0, cut) : parts).join('/');
    if (/^(datasets|spaces|models|api)(\/|$)/.test(text)) {
      throw new Error(`${LABEL}: ${quoted} is not a link to a model page (huggingface.co/<organisation>/<name>).`);
    }
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new Error(`${LABEL}: ${quoted} is a link to another site; give a model id such as ${EXAMPLE}, ` +
      'or a huggingface.co link.');
  }
  const segments = text.split('/');
  if (segments.length > 2 || !segments.every(validSegment)) {
    throw new Error(`${LABEL}: ${quoted} is not a model id. An id is an organisation and a name, such as ` +
      `${EXAMPLE}: letters, digits, "-", "_" and "." (no "--" or ".."), at most ${MAX_NAME} characters each.`);
  }
  return { id: segments.join('/'), name: segments[segments.length - 1].toLowerCase() };
}

/** The model's page on the Hub. */
export const modelPage = (id) => `${HUB}/${id}`;

/** How to use a model the page cannot fetch: paste its config.json. */
const pasteInstead = (id) => [' To use it, open ', { href: modelPage(id), text: modelPage(id) },
  ', download config.json from "Files and versions" and paste it in the config box below ' +
  '("Paste, open or drop a HuggingFace config.json").'];

/** The body of `response` as text, refused above MAX_BYTES (counted as it arrives). */
async function readCapped(response, file, id) {
  const tooLarge = () => new HubError([`${file} of ${id} is larger than ${MAX_BYTES / (1 << 20)} MB; a config is a ` +
    'few KB, so this is not one. Nothing was changed.']);
  if (Number(response.headers.get('content-length')) > MAX_BYTES) throw tooLarge();
  const reader = response.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_BYTES) {
      reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes);
}

/** fetch() of `file` in model `id`'s main branch; a network failure said in words. */
async function hubFetch(id, file, signal) {
  try {
    return await fetch(`${modelPage(id)}/resolve/main/${file}`, { signal, credentials: 'omit', cache: 'no-cache' });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new HubError([`The browser could not fetch ${file} of ${id} from huggingface.co (offline, blocked by a ` +
      'network filter, or the Hub did not answer).', ...pasteInstead(id)]);
  }
}

/** JSON text that holds one object, or a HubError saying what it is instead. */
function jsonObject(text, file, id) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HubError([`huggingface.co sent something that is not JSON for ${file} of ${id} (${error.message}); ` +
      'nothing was changed.']);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HubError([`${file} of ${id} is not a JSON object; nothing was changed.`]);
  }
  return value;
}

/**
 * config.json of Hub model `id` as text, with hf_quant_config.json folded in when the model
 * has one: {text, folded}. Throws a HubError in words (or the AbortError when `signal` aborts).
 */
export async function fetchHubConfig(id, signal) {
  const response = await hubFetch(id, 'config.json', signal);
  if (response.status === 401 || response.status === 403) {
    // The Hub says which (X-Error-Code) when it exposes it; signed out, a private model and one
    // that does not exist answer alike.
    const code = response.headers.get('x-error-code');
    const what = code === 'GatedRepo' ? `${id} is a gated model`
      : code === 'RepoNotFound' ? `huggingface.co has no public model ${id} (no such model, or a private one)`
        : `${id} is a gated or private model`;
    throw new HubError([`${what}: huggingface.co answered ${response.status} and sends its files only to signed-in ` +
      'users who accepted its licence, and this page asks without your Hub login.',
    ' To use it, open ', { href: modelPage(id), text: modelPage(id) }, ', accept the licence (signed in), ' +
      'download config.json from "Files and versions" and paste it in the config box below ("Paste, open or ' +
      'drop a HuggingFace config.json").']);
  }
  if (response.status === 404) {
    throw new HubError([`No such model or no config.json: huggingface.co has no ${id}/config.json (404). Check the ` +
      'id on ', { href: modelPage(id), text: modelPage(id) }, '.']);
  }
  if (!response.ok) {
    throw new HubError([`huggingface.co answered ${response.status} for config.json of ${id}; try again later.`,
      ...pasteInstead(id)]);
  }
  const text = await readCapped(response, 'config.json', id);
  const config = jsonObject(text, 'config.json', id);
  // A ModelOpt checkpoint keeps its quantization beside the config; vLLM reads it as quant_method "modelopt".
  const quant = await hubFetch(id, 'hf_quant_config.json', signal);
  if (quant.status === 404) return { text, folded: false };
  if (!quant.ok) {
    throw new HubError([`config.json of ${id} arrived but hf_quant_config.json did not (huggingface.co answered ` +
      `${quant.status}); without it the weights' format would be wrong, so nothing was changed.`,
    ...pasteInstead(id)]);
  }
  const q = jsonObject(await readCapped(quant, 'hf_quant_config.json', id), 'hf_quant_config.json', id);
  config.quantization_config = { quant_method: 'modelopt', ...(q.quantization ?? q) };
  return { text: JSON.stringify(config, null, 2), folded: true };
}

/** `parts` (strings and {href, text}) as nodes; links open in a new tab. */
const nodes = (parts) => parts.map((p) => (typeof p === 'string' ? p
  : h('a', { href: p.href, target: '_blank', rel: 'noopener', text: p.text })));

/**
 * The box's behaviour on its `input` (the id), `status` (what it is doing) and the panel's
 * `apply(text, name, id)` (uses a config as "Use this config" does; throws the core's refusal) and
 * `edit(text, name, id)` (puts a config in the config box); `id` is the Hub id as written
 * (org/Name), for the Plan panel's `vllm serve` line. Returns {fetch()}: fetches what `input`
 * holds. Editing the id aborts a fetch on its way.
 * @param {{input: HTMLInputElement, status: HTMLElement, store: import('./store.js').Store,
 *   apply: (text: string, name: string, id: string) => void,
 *   edit: (text: string, name: string, id: string) => void}} box
 */
export function hubBox({ input, status, store, apply, edit }) {
  let latest = 0; // the newest fetch's number: an answer to an older one is dropped
  let controller = null;
  const say = (...parts) => fill(status, ...nodes(parts));
  const stop = () => {
    controller?.abort();
    controller = null;
  };
  input.addEventListener('input', () => {
    if (controller) {
      stop();
      latest++;
      status.dataset.state = 'stopped';
      say('Stopped: the id changed. Press Enter or "Fetch config.json" to fetch the new one.');
    }
    clearFieldError(input);
  });

  async function fetchTyped() {
    stop();
    const ticket = ++latest;
    clearFieldError(input);
    status.dataset.state = 'fetching';
    let id;
    let name;
    try {
      ({ id, name } = parseHubId(input.value));
    } catch (error) {
      say();
      status.dataset.state = 'invalid';
      setFieldError(input, error.message);
      return;
    }
    const mine = new AbortController();
    controller = mine;
    const model = store.state.model; // the model shown when asked: a newer choice wins over this answer
    say(`Fetching config.json of ${id} from huggingface.co…`);
    let fetched;
    try {
      fetched = await fetchHubConfig(id, mine.signal);
    } catch (error) {
      if (ticket !== latest || mine.signal.aborted) return;
      controller = null;
      say();
      status.dataset.state = 'error';
      fill(setFieldError(input, ''), ...nodes(error.parts ?? [`${LABEL}: ${error.message}`]));
      return;
    }
    if (ticket !== latest) return;
    controller = null;
    if (store.state.model !== model) {
      status.dataset.state = 'dropped';
      say(`Not used: the model was changed while config.json of ${id} was on its way.`);
      return;
    }
    const from = [{ href: modelPage(id), text: id }, ' from huggingface.co',
      fetched.folded ? ', its hf_quant_config.json (ModelOpt) folded into quantization_config' : ''];
    try {
      apply(fetched.text, name, id);
    } catch (error) {
      say();
      status.dataset.state = 'error';
      const note = setFieldError(input, '');
      const why = error.path ? ` (${error.path}): ${error.message}` : `: ${error.message}`;
      fill(note, ...nodes(['The config.json of ', ...from, ` cannot be priced${why} `]),
        h('button', { type: 'button', text: 'Edit it in the config box',
          onclick: () => edit(fetched.text, name, id) }));
      return;
    }
    status.dataset.state = 'done';
    say('Using the config.json of ', ...from, '.');
  }
  return { fetch: fetchTyped };
}

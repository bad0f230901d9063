// SPDX-License-Identifier: Apache-2.0
// Field-level errors under their inputs; a registry maps core JSON paths to inputs.
import { h, parseNumber, withDocLinks } from './dom.js';

const shown = new WeakMap();
let serial = 0;

/** Shows `message` under `input` (replacing an earlier one); returns the message node. */
export function setFieldError(input, message) {
  clearFieldError(input);
  // A document the message names ("docs/KERNELS.md lists what each GPU measures") is a link to its page.
  const note = h('p', { class: 'field-error', 'data-testid': 'error', id: `err-${++serial}`, role: 'alert' },
    withDocLinks(message));
  (input.closest('.field, .block') || input).after(note);
  // An input folded away (the reference modes' constants in measured) is unfolded to show it.
  const folded = input.closest('details:not([open])');
  if (folded) /** @type {HTMLDetailsElement} */ (folded).open = true;
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', note.id);
  shown.set(input, note);
  return note;
}

export function clearFieldError(input) {
  const note = shown.get(input);
  if (!note) return;
  note.remove();
  input.removeAttribute('aria-invalid');
  input.removeAttribute('aria-describedby');
  shown.delete(input);
}

/** Maps JSON paths (`step.decode_requests[3].progress_index`) to the inputs that edit them. */
export class FieldRegistry {
  constructor(banner) {
    this.inputs = new Map();
    this.banner = banner;
    this.marked = [];
  }

  add(path, input) {
    this.inputs.set(path, input);
    input.dataset.path = path;
  }

  /** The input for `path` or for its nearest registered parent path. */
  find(path) {
    for (let p = path || ''; p; p = p.replace(/(\.[^.[\]]*|\[\d+\])$/, '')) {
      const input = this.inputs.get(p);
      if (input?.isConnected) return input;
      if (!/[.[]/.test(p)) break;
    }
    return null;
  }

  /** Replaces the shown errors with `errors` ([{path, message}]). */
  show(errors) {
    for (const input of this.marked) clearFieldError(input);
    this.marked = [];
    this.banner.replaceChildren();
    for (const { path, message } of errors) {
      const input = this.find(path);
      if (input && !this.marked.includes(input)) {
        setFieldError(input, message);
        this.marked.push(input);
      } else if (!input) {
        this.banner.append(
          h('p', { class: 'field-error', 'data-testid': 'error', role: 'alert' }, withDocLinks(message)));
      }
    }
  }

  /** Errors for registered inputs whose text is not a number. */
  typedErrors() {
    const out = [];
    for (const [path, input] of this.inputs) {
      if (!input.isConnected || input.dataset.kind !== 'number') continue;
      if (!Number.isFinite(parseNumber(input.value))) out.push({ path, message: 'Enter a number.' });
    }
    return out;
  }
}

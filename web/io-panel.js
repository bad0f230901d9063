// SPDX-License-Identifier: Apache-2.0
// Share and move the step: copy a link, and import or export the request as JSON in
// the CLI's format (the file `stepcalc price` reads).
import { h } from './dom.js';
import { setFieldError, clearFieldError } from './errors.js';
import { toRequest } from './state.js';
import { stateFromRequest } from './link.js';
import { requestFromText } from './intake.js';

/**
 * Builds the share controls into `shareRoot` and the JSON import and export into `jsonRoot`.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} shareRoot @param {HTMLElement} jsonRoot
 * @returns {import('./store.js').Panel}
 */
export function ioPanel({ calc, pricer, store }, shareRoot, jsonRoot) {
  const status = h('span', { class: 'status', role: 'status' });
  const link = h('input', { type: 'text', readonly: true, id: 'share-link', 'aria-label': 'Link to this step' });
  const copyLink = h('button', { type: 'button', id: 'copy-link', text: 'Copy link' });
  const text = h('textarea',
    { id: 'request-json', rows: 8, spellcheck: 'false', 'aria-label': 'Request JSON (CLI format)' });
  const block = h('div', { class: 'block' }, text);
  const button = (label, onclick, id) => h('button', { type: 'button', text: label, onclick, id });
  const say = (message) => {
    status.textContent = message;
    setTimeout(() => { if (status.textContent === message) status.textContent = ''; }, 2500);
  };

  async function copy(value, done) {
    try {
      await navigator.clipboard.writeText(value);
      say(done);
    } catch {
      say('Copying is blocked here: select the text and copy it.');
    }
  }

  copyLink.addEventListener('click', () => {
    link.value = location.href;
    link.select();
    copy(location.href, 'Link copied.');
  });
  const exportJson = () => {
    text.value = JSON.stringify(toRequest(store.state), null, 1);
    clearFieldError(text);
  };
  const importJson = async () => {
    try {
      // Checked by the core as written (intake.js; a long text in the pricing worker); throws
      // the core's error.
      const { request } = await requestFromText(calc, pricer, text.value);
      store.replace(stateFromRequest(calc, request));
      clearFieldError(text);
      say('Imported.');
    } catch (error) {
      setFieldError(text, error.code === 'cancelled'
        ? 'Not imported: the step was edited while the request was being checked. Import it again.'
        : `Cannot import: ${error.path ? `${error.path}: ` : ''}${error.message}`);
    }
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([JSON.stringify(toRequest(store.state), null, 1)],
      { type: 'application/json' }));
    const a = h('a', { href: url, download: 'step-request.json' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  const file = h('input', { type: 'file', accept: '.json,application/json', 'aria-label': 'Open a request JSON file' });
  file.addEventListener('change', async () => {
    if (!file.files[0]) return;
    text.value = await file.files[0].text();
    importJson();
  });

  shareRoot.append(h('div', { class: 'actions share' }, copyLink, link, status));
  jsonRoot.append(
    h('details', { id: 'io' }, h('summary', { text: 'Import or export the step as JSON (CLI request format)' }),
      block,
      h('div', { class: 'actions' }, button('Show current request', exportJson, 'export-json'),
        button('Import', importJson, 'import-json'),
        button('Copy JSON', () => { exportJson(); copy(text.value, 'JSON copied.'); }), button('Download', download),
          file),
      h('small', { class: 'muted', text: 'Same format as: stepcalc price request.json' })));
  // The link shown is the address, which holds the priced state (address.js writes it first).
  return { priced: () => { link.value = location.href; } };
}

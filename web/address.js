// SPDX-License-Identifier: Apache-2.0
// The address bar and the state: the link in the address is applied when the page
// opens and whenever the hash changes; after each price the address holds the priced
// state (and A), except while it holds a link that could not be shown, which stays as
// it was so it can be fixed, with a note saying why under the number.
import { $, h, withDocLinks } from './dom.js';
import { defaultState, encodeHash } from './state.js';
import { stateFromHash } from './link.js';

/** An error note in the result card. */
export const errorNote = (text) =>
  h('p', { class: 'field-error', 'data-testid': 'error', role: 'alert' }, withDocLinks(text));

/**
 * @param {{calc: any, pricer: ReturnType<typeof import('./pricer.js').createPricer>,
 *   store: import('./store.js').Store, embed: boolean, priceNow: () => void}} parts
 * `priceNow` prices the store's state at once.
 */
export function addressBar({ calc, pricer, store, embed, priceNow }) {
  let keepLink = false; // the address holds a link that could not be shown: leave it
  let applying = false; // the store's state is being replaced from the address
  let reading = 0; // counts the links read: a big link's check that a newer one overtook is dropped
  const linkError = $('#link-error');

  /** The link's error; with `offer` (the link's own state), a button that shows it anyway. */
  function showLinkError(message, offer) {
    const note = message ? errorNote(message) : '';
    if (note && offer) {
      note.append(' ', h('button', { type: 'button', text: 'Show the link\'s step anyway', onclick: () => {
        store.replace(offer); // an edit: the address shows the step again (edited())
        priceNow();
      } }));
    }
    linkError.replaceChildren(note);
  }

  /** The user changed the step (not the address): the address follows the step again. */
  function edited() {
    if (applying) return;
    keepLink = false;
    showLinkError('');
  }

  /** Makes `state` and A the store's, from the address. */
  function apply(state, pinned) {
    applying = true;
    try {
      store.replace(state, pinned);
    } finally {
      applying = false;
    }
    priceNow();
  }

  /**
   * Applies the location's link: a good one replaces the state, a bad one only says why. A
   * big step is checked in the pricing worker first: an edit meanwhile (which cancels the
   * check) or a newer link wins, and this one is dropped.
   */
  async function fromLocation(first) {
    const mine = ++reading;
    let outcome;
    try {
      outcome = await stateFromHash(calc, pricer, location.hash);
    } catch (error) {
      if (error.code === 'cancelled') return;
      throw error;
    }
    if (mine !== reading) return;
    const { state, pinned, error, offer } = outcome;
    if (!error) {
      keepLink = false;
      showLinkError('');
      document.body.classList.remove('broken');
      apply(state ?? defaultState(), pinned ?? null);
      return;
    }
    keepLink = true;
    const next = embed ? 'The page that embeds it needs to fix its link.'
      : first ? 'The default step is shown below; fix the address or edit the step.'
        : 'Your step is still shown; fix the address or go on editing.';
    showLinkError(`${error} ${next}`, !embed && offer);
    if (embed) {
      // An embed shows what its link asks for or nothing: no other step's number.
      $('#headline').replaceChildren();
      $('#context').textContent = '';
      document.body.classList.add('broken');
      return;
    }
    if (first) apply(defaultState(), null);
  }

  /** Writes the store's state (and A) into the address, unless it holds a link to fix. */
  function write() {
    const hash = `#${encodeHash(store.state, store.pinned?.state)}`;
    const here = new URL(document.URL);
    if (!keepLink && hash !== here.hash) {
      here.hash = hash;
      history.replaceState(null, '', here.href);
    }
    const full = new URL(document.URL);
    full.search = '';
    full.hash = hash;
    $('#open-full').href = full.href;
  }

  return { fromLocation, edited, write };
}

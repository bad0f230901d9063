// SPDX-License-Identifier: Apache-2.0
// The serving bundle, loaded by import() after the first view: one serving runner
// (web/serving-runner.js) shared by the Serving panel, the summary strip's serving figures
// and the A/B comparison's (web/serving-compare.js), so they show one simulation of the
// workload. Started after all subscribed.
import { servingRunner } from './serving-runner.js';
import { servingPanel } from './serving-panel.js';
import { servingSummary } from './serving-summary.js';
import { servingCompare } from './serving-compare.js';

/**
 * Builds the Serving panel into `panel` and, when `strip` is given, the summary strip's
 * serving figures into it, when `compare` is, the comparison's; then simulates the page's
 * workload.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} panel
 * @param {{view?: string, strip?: HTMLElement | null, compare?: HTMLElement | null}} [options]
 */
export function startServing(context, panel, { view, strip, compare } = {}) {
  const runner = servingRunner(context);
  servingPanel(context, panel, { view, runner });
  if (strip) servingSummary(context, strip, runner);
  if (compare) servingCompare(context, compare, runner);
  runner.start();
  return runner;
}

// SPDX-License-Identifier: Apache-2.0
// The serving bundle, loaded by import() after the first view: one serving runner
// (web/serving-runner.js) shared by the Serving panel and the summary strip's serving
// figures, so the two show one simulation of the workload. Started after both subscribed.
import { servingRunner } from './serving-runner.js';
import { servingPanel } from './serving-panel.js';
import { servingSummary } from './serving-summary.js';

/**
 * Builds the Serving panel into `panel` and, when `strip` is given, the summary strip's
 * serving figures into it; then simulates the page's workload.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} panel
 * @param {{view?: string, strip?: HTMLElement | null}} [options]
 */
export function startServing(context, panel, { view, strip } = {}) {
  const runner = servingRunner(context);
  servingPanel(context, panel, { view, runner });
  if (strip) servingSummary(context, strip, runner);
  runner.start();
  return runner;
}

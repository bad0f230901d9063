// SPDX-License-Identifier: Apache-2.0
// A generated section of BENCHMARKS.md rewritten in place: from its heading to the
// next "## " heading, or inserted before `before` (another section's heading) when the
// file has none yet, else appended.
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * @param {string} file BENCHMARKS.md
 * @param {string} heading the section's "## " line
 * @param {string} section the section's new text, heading included
 * @param {string} before the heading it goes before when new
 */
export function replaceSection(file, heading, section, before) {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(heading);
  let next;
  if (start >= 0) {
    const after = text.indexOf('\n## ', start + heading.length);
    next = text.slice(0, start) + section + (after >= 0 ? `\n${text.slice(after)}` : '\n');
  } else {
    const at = text.indexOf(`\n${before}`);
    next = at >= 0 ? `${text.slice(0, at)}\n${section}\n${text.slice(at)}` : `${text.trimEnd()}\n\n${section}\n`;
  }
  writeFileSync(file, next);
}

// SPDX-License-Identifier: Apache-2.0
// Renders the Markdown documentation (README.md, docs/*.md) to HTML pages under
// web/dist/docs/, so the calculator can link to them and a browser shows them as
// documents rather than plain text. Links between the documents point to their HTML
// pages; other relative links (pictures, data files) point to the files themselves.
// Run by scripts/build-page.mjs; marked (npm, a devDependency) does the Markdown.
import { readFileSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Marked } from 'marked';

const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** The Markdown files rendered, relative to `root`, each to web/dist/docs/<name>.html. */
export function docSources(root) {
  return ['README.md',
    ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
}
const htmlName = (source) => (source === 'README.md' ? 'index.html' : `${path.basename(source, '.md')}.html`);

/** Rewrites one relative link of `source` (a repo-relative .md path) for the page at web/dist/docs/. */
function relink(href, source, rendered) {
  if (/^([a-z][a-z0-9+.-]*:|#|\/)/i.test(href)) return href;
  const [target, fragment = ''] = href.split('#');
  const file = path.posix.normalize(path.posix.join(path.posix.dirname(source), target));
  const hash = fragment ? `#${fragment}` : '';
  if (rendered.includes(file)) return htmlName(file) + hash;
  return `../../../${file}${hash}`;
}

/** Writes every document's page; returns the list of files written. */
export function buildDocs(root, outDir) {
  const sources = docSources(root);
  mkdirSync(outDir, { recursive: true });
  const written = [];
  for (const source of sources) {
    const marked = new Marked({ gfm: true, async: false });
    marked.use({
      walkTokens(token) {
        if ((token.type === 'link' || token.type === 'image') && token.href) token.href = relink(token.href, source,
          sources);
      },
    });
    const text = readFileSync(path.join(root, source), 'utf8');
    const title = /^#\s+(.+)$/m.exec(text)?.[1] ?? source;
    const nav = sources.map((s) => (s === source ? `<strong>${escapeHtml(path.basename(s))}</strong>`
      : `<a href="${htmlName(s)}">${escapeHtml(path.basename(s))}</a>`)).join(' · ');
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'none'; style-src 'self'; img-src ` +
  `'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'">
<title>${escapeHtml(title)} · stepcalc</title>
<link rel="stylesheet" href="../style.css">
</head>
<body class="doc">
<nav class="doc-nav"><a href="../../../index.html">← The calculator</a> · ${nav}</nav>
<main class="doc-body card">
${marked.parse(text)}
</main>
<footer><p>Rendered from <code>${escapeHtml(source)}</code> by <code>npm run build</code>.</p></footer>
</body>
</html>
`;
    const out = path.join(outDir, htmlName(source));
    writeFileSync(out, html);
    written.push(out);
  }
  return written;
}

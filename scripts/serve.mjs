// SPDX-License-Identifier: Apache-2.0
// A small static file server for the calculator page: serves the page's files on
// localhost and prints the URL. Usage: node scripts/serve.mjs [PORT] (default 8080,
// or the next free port). Only the page's own files are served (PAGE_FILES: not .git,
// build/, node_modules or the sources), never through a symlink that leaves them, and
// only to requests whose Host is this machine (no DNS rebinding); a file with a
// precompressed sibling (.br, .gz from scripts/build-page.mjs) is sent compressed to
// clients that accept it.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const realRoot = fs.realpathSync(root);
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.csv': 'text/csv; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

const MAX_PATH_CHARS = 4096;

/** What the page loads, relative to the root: a file, or a folder ending in "/". */
export const PAGE_FILES = ['index.html', 'web/', 'wasm/stepcalc.js', 'wasm/dist/', 'docs/', 'data/', 'LICENSE',
  'NOTICE'];

/** The hosts a request may name (any port): this machine only. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether `relative` (POSIX separators) is one of `allow` or below one of its folders. */
const allowed = (relative, allow) => allow.some((a) => (a.endsWith('/') ? relative.startsWith(a) : relative === a));

/** The file below `root` that `url` names, or an HTTP status refusing it. */
function resolveFile(url, allow) {
  let pathname;
  try {
    // Prefixed, not resolved: "//index.html" is a path here, not a host.
    pathname = decodeURIComponent(new URL(url.startsWith('/') ? `http://localhost${url}` : url).pathname);
  } catch {
    return { status: 400 };
  }
  // NUL makes fs throw synchronously; a path this long is no file of ours.
  if (pathname.includes('\0') || pathname.length > MAX_PATH_CHARS) return { status: 400 };
  let file = path.join(root, path.normalize(pathname));
  if (file !== root && !file.startsWith(root + path.sep)) return { status: 403 };
  if (pathname.endsWith('/')) file = path.join(file, 'index.html');
  if (!allowed(path.relative(root, file).split(path.sep).join('/'), allow)) return { status: 404 };
  return { file };
}

const TEXTS = { 400: 'bad request', 403: 'forbidden', 404: 'not found', 405: 'method not allowed',
  500: 'server error' };

/** Ends `res` with a short plain-text status, unless headers already went out. */
function refuse(res, status) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(TEXTS[status]);
}

/**
 * The precompressed sibling of `file` (`.br`, else `.gz`, as scripts/build-page.mjs
 * writes them) that the request accepts and that is not older than the file, or null.
 */
function precompressed(req, file, stat) {
  const accepted = String(req.headers['accept-encoding'] || '').toLowerCase().split(',').map((part) => {
    const [name, ...params] = part.split(';').map((t) => t.trim());
    const q = params.find((p) => p.startsWith('q='));
    return q && !(Number(q.slice(2)) > 0) ? '' : name;
  });
  for (const [encoding, ext] of [['br', '.br'], ['gzip', '.gz']]) {
    if (!accepted.includes(encoding)) continue;
    try {
      const packed = fs.statSync(file + ext);
      if (packed.isFile() && packed.mtimeMs >= stat.mtimeMs) return { encoding, file: file + ext, size: packed.size };
    } catch {
      // no such sibling: try the next encoding
    }
  }
  return null;
}

/** Whether the request's Host header names this machine. */
function localHost(req) {
  const host = String(req.headers.host ?? '').toLowerCase();
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  return LOCAL_HOSTS.has(name);
}

function serve(req, res, allow) {
  if (!localHost(req)) return refuse(res, 403);
  if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405);
  const { file, status } = resolveFile(req.url, allow);
  if (!file) return refuse(res, status);
  fs.realpath(file, (err, real) => {
    // A symlink may not lead out of the page's files.
    if (err || !allowed(path.relative(realRoot, real).split(path.sep).join('/'), allow)) return refuse(res, 404);
    send(req, res, real);
  });
}

function send(req, res, file) {
  fs.stat(file, (err, stat) => {
    if (err || !stat.isFile()) return refuse(res, 404);
    const packed = precompressed(req, file, stat);
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
      'content-length': packed ? packed.size : stat.size,
      'cache-control': 'no-cache',
      vary: 'accept-encoding',
      ...(packed && { 'content-encoding': packed.encoding }),
    });
    if (req.method === 'HEAD') return res.end();
    const stream = fs.createReadStream(packed ? packed.file : file);
    stream.on('error', () => refuse(res, 500)); // e.g. the file went away after stat
    stream.pipe(res);
  });
}

/**
 * The server: every request gets a response (400 for a path that is not valid
 * percent-encoding, holds NUL or is over 4,096 characters; 403 outside the root or
 * for a Host that is not this machine; 404 for what is not a page file, 405), and no
 * request can stop it (tests/web/serve.test.mjs). `options.allow` replaces PAGE_FILES
 * (the page tests add their fixtures).
 */
export function createServer(options = {}) {
  const allow = options.allow ?? PAGE_FILES;
  const server = http.createServer((req, res) => {
    try {
      serve(req, res, allow);
    } catch {
      refuse(res, 500);
    }
  });
  server.on('clientError', (err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

export function listen(server, port, host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const attempt = (p, triesLeft) => {
      server.once('error', (err) => {
        if (err.code === 'EADDRINUSE' && triesLeft > 0) attempt(p + 1, triesLeft - 1);
        else reject(err);
      });
      server.listen(p, host, () => resolve(server.address().port));
    };
    attempt(port, 20);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = await listen(createServer(), Number(process.argv[2] || process.env.PORT || 8080));
  console.log(`stepcalc is served at http://localhost:${port}/  (Ctrl+C to stop)`);
}

// SPDX-License-Identifier: Apache-2.0
// The dev server (scripts/serve.mjs) as a separate process on 127.0.0.1: odd request
// paths (NUL, "..", very long, bad percent-encoding, raw bytes, a double slash) each get
// an HTTP response, none escapes the repository, and the server is still up afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/serve.mjs', import.meta.url));
let server;
let port;
let exited = null;

before(async () => {
  server = spawn(process.execPath, [script, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  server.on('exit', (code, signal) => { exited = `exit ${code} ${signal ?? ''}`; });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr += d; });
  port = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /:(\d+)\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', () => reject(new Error(`the server did not start: ${stderr}`)));
  });
});
after(() => server?.kill());

/** Sends raw bytes as one request; resolves with the status line's code (or throws). */
function raw(bytes) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    socket.setTimeout(5000, () => socket.destroy(new Error('no response within 5 s')));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (m) resolve({ status: Number(m[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      else reject(new Error(`no HTTP response: ${JSON.stringify(text.slice(0, 80))}`));
    });
    socket.write(bytes); // not end(): a half-closed socket may lose a late response
  });
}
const get = (target) =>
  raw(Buffer.concat([Buffer.from('GET '), Buffer.isBuffer(target) ? target : Buffer.from(target, 'latin1'),
  Buffer.from(' HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n')]));

const ODD = [
  ['a NUL escape', '/%00', 400],
  ['a NUL escape inside a name', '/index.html%00.png', 400],
  ['a dot-dot escape', '/%2e%2e/%2e%2e/etc/passwd', 404],
  ['slashes escaped around dot-dots', '/..%2f..%2f..%2fetc%2fpasswd', 404],
  ['raw dot-dots', '/../../../../etc/passwd', 404],
  ['backslash dot-dots', '/..\\..\\etc\\passwd', 404],
  ['a lone percent sign', '/%', 400],
  ['a truncated escape', '/%E0%A4%A', 400],
  ['an invalid escape', '/%ZZ', 400],
  ['percent-encoded invalid UTF-8', '/%C3%28', 400],
  ['a percent-encoded lone surrogate', '/%ED%A0%80', 400],
  ['raw bytes above ASCII', Buffer.from([0x2f, 0xff, 0xfe, 0x80]), [400, 404]],
  ['a path of 5,000 characters', `/${'a'.repeat(5000)}`, 400],
  ['a path of 60,000 characters', `/${'a/'.repeat(30000)}`, [400, 414, 431]],
  ['a path of 4,000 characters (under the limit)', `/${'a'.repeat(4000)}`, 404],
  ['a directory without index.html', '/web/', 404],
  ['a directory without the slash', '/web', 404],
  ['a double slash before the page', '//index.html', 200],
  ['a double slash alone', '//', 200],
  ['an absolute-form target', 'http://127.0.0.1/index.html', 200],
  ['an asterisk', '*', [400, 404]],
  ['a query with a NUL', '/index.html?x=%00', 200],
];

for (const [label, target, expected] of ODD) {
  test(`serve: ${label} gets a response`, async () => {
    const { status } = await get(target);
    assert.ok([expected].flat().includes(status), `${label}: HTTP ${status}, expected ${expected}`);
    assert.equal(exited, null, `the server stopped: ${exited}`);
  });
}

test('serve: malformed requests get a 400 and other methods a 405', async () => {
  assert.equal((await raw('GARBAGE\r\n\r\n')).status, 400);
  assert.equal((await raw('GET / HTTP/1.1\r\nhost: x\r\nbad header line\r\n\r\n')).status, 400);
  assert.equal((await raw('DELETE /index.html HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n')).status, 405);
  assert.equal(exited, null, `the server stopped: ${exited}`);
});

test('serve: nothing outside the repository is served; the page still is', async () => {
  const passwd = await get('/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd');
  assert.ok(!passwd.body.includes('root:'), 'served /etc/passwd');
  const page = await get('/index.html');
  assert.equal(page.status, 200);
  assert.match(page.body, /<html/i);
  assert.equal(exited, null, `the server stopped: ${exited}`);
});

test('serve: only the page\'s files: not .git, build/, node_modules, sources or tools', async () => {
  for (const target of ['/.git/config', '/build/stepcalc', '/node_modules/eslint/package.json', '/core/api/api.cpp',
    '/package.json', '/tools/pack-kernels.mjs', '/tests/web/serve.test.mjs', '/scripts/serve.mjs']) {
    assert.equal((await get(target)).status, 404, target);
  }
  for (const target of ['/web/dist/app.js', '/wasm/stepcalc.js', '/wasm/dist/stepcalc-core.wasm', '/docs/accuracy.json',
    '/data/calibration/h100-vllm-steps-llama-2-70b-tp4.csv']) {
    assert.equal((await get(target)).status, 200, target);
  }
});

test('serve: a symlink that leaves the page\'s files is not followed', async () => {
  const link = fileURLToPath(new URL('../../web/dist/leak-test-link.txt', import.meta.url));
  fs.rmSync(link, { force: true });
  fs.symlinkSync('/etc/passwd', link);
  const inside = fileURLToPath(new URL('../../web/dist/inside-test-link.js', import.meta.url));
  fs.rmSync(inside, { force: true });
  fs.symlinkSync(fileURLToPath(new URL('../../web/dist/app.js', import.meta.url)), inside);
  try {
    const leak = await get('/web/dist/leak-test-link.txt');
    assert.equal(leak.status, 404);
    assert.ok(!leak.body.includes('root:'));
    assert.equal((await get('/web/dist/inside-test-link.js')).status, 200);  // a link within them is fine
  } finally {
    fs.rmSync(link, { force: true });
    fs.rmSync(inside, { force: true });
  }
});

test('serve: a Host that is not this machine is refused (DNS rebinding)', async () => {
  const withHost = (host) => raw(`GET /index.html HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
  for (const host of ['evil.example', 'evil.example:8080', '127.0.0.1.evil.example', '10.0.0.1']) {
    assert.equal((await withHost(host)).status, 403, host);
  }
  for (const host of ['localhost', 'LOCALHOST:8080', `127.0.0.1:${port}`, '[::1]:80']) {
    assert.equal((await withHost(host)).status, 200, host);
  }
});

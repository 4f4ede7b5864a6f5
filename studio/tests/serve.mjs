// Serves the built Studio (dist/) at /studio/ and passes every other request to an auto
// server, streaming (server-sent events included): the Studio as `auto serve` will serve it,
// for a server binary that does not embed it (or embeds another build).
//
//   node tests/serve.mjs --upstream http://127.0.0.1:8040 --port 8050
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, normalize, extname, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const upstream = new URL(args.upstream || 'http://127.0.0.1:8040');
const port = Number(args.port || 8050);
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
// The policy `auto serve` sends with the Studio's pages (crates/auto-server/src/studio.rs), so a
// test through this server also proves the Studio keeps to it.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.json': 'application/json', '.png': 'image/png' };

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/') {
    res.writeHead(302, { location: '/studio/' }).end();
    return;
  }
  if (url.pathname === '/studio' || url.pathname.startsWith('/studio/')) {
    let rel = url.pathname.slice('/studio'.length) || '/';
    if (rel === '/') rel = '/index.html';
    const file = normalize(join(dist, rel));
    if (!file.startsWith(dist)) return void res.writeHead(403).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream', 'cache-control': rel.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache', 'content-security-policy': CSP });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
    return;
  }
  const proxied = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (up) => {
    res.writeHead(up.statusCode || 502, up.headers);
    res.flushHeaders();
    up.pipe(res);
  });
  proxied.on('error', (e) => { if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }); res.end(String(e)); });
  req.pipe(proxied);
  res.on('close', () => proxied.destroy());
});
server.listen(port, '127.0.0.1', () => console.log(`studio on http://127.0.0.1:${port}/studio/ -> ${upstream.origin}`));

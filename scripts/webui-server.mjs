// Serves Unleash's frontend build as Unleash's server does (index.html with its placeholders
// rewritten, index.html for unknown non-asset paths) and proxies the API paths to halyard.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
const [buildDir, port, upstreamPort] = process.argv.slice(2);
const indexHtml = fs.readFileSync(path.join(buildDir, 'index.html'), 'utf8')
  .replace(/::baseUriPath::/gi, '')
  .replace(/::cdnPrefix::/gi, '')
  .replace(/::faviconPrefix::/gi, '')
  .replace(/::uiFlags::/gi, '{}')
  .replace(/::unleashToken::/gi, '');
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.html': 'text/html',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.gif': 'image/gif',
  '.jpg': 'image/jpeg', '.ico': 'image/x-icon', '.woff': 'font/woff', '.woff2': 'font/woff2', '.txt': 'text/plain',
  '.map': 'application/json', '.webp': 'image/webp' };
const proxied = (p) => p === '/api' || p.startsWith('/api/') || p.startsWith('/auth/') || p === '/logout'
  || p.startsWith('/invite/') || p === '/health';
const root = path.resolve(buildDir);
// A new connection per request: a reused idle connection that the server closes at the same
// moment would show up as a 502 that is the proxy's, not the server's.
const noKeepAlive = new http.Agent({ keepAlive: false });
http.createServer((req, res) => {
  const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  if (proxied(pathname)) {
    const upstream = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, agent: noKeepAlive,
      headers: { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress, 'x-forwarded-proto': 'http' } },
      (up) => { res.writeHead(up.statusCode, up.rawHeaders); up.pipe(res); });
    upstream.on('error', (e) => { res.writeHead(502, { 'content-type': 'text/plain' }); res.end(`proxy: ${e.message}`); });
    req.pipe(upstream);
    return;
  }
  const file = path.join(root, path.normalize(pathname));
  if (file.startsWith(root + path.sep) && fs.existsSync(file) && fs.statSync(file).isFile() && pathname !== '/index.html') {
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
    return;
  }
  const ext = path.extname(pathname);
  res.writeHead(ext && ext !== '.html' ? 404 : 200, { 'content-type': 'text/html', 'cache-control': 'no-cache' });
  res.end(indexHtml);
}).listen(+port, '127.0.0.1');

// A tiny static file server for the web build (127.0.0.1 only). Used by the e2e test and by
// scripts/run.sh when there is no display:  node tests/e2e/serve.mjs build/web/site 8080 [/course/megacluster/]
// With a prefix the site is served only under it, as a course site hosts it in a folder of its own: a
// request for anything outside the prefix (a page asking for "/index.wasm") is a 404, as it would be there.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".wasm": "application/wasm",
                ".data": "application/octet-stream", ".json": "application/json", ".png": "image/png" };

export function serveStatic(root, port, prefix = "/") {
  const base = path.resolve(root);
  const server = http.createServer((req, res) => {
    let p = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (p + "/" === prefix) { res.writeHead(301, { Location: prefix }); res.end(); return; }  // "/course/x" -> "/course/x/"
    if (!p.startsWith(prefix)) { res.writeHead(404); res.end("not found"); return; }
    p = "/" + p.slice(prefix.length);
    if (p.endsWith("/")) p += "index.html";
    const file = path.resolve(base, "." + p);
    if (!file.startsWith(base) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404); res.end("not found"); return;
    }
    res.writeHead(200, { "Content-Type": types[path.extname(file)] || "application/octet-stream",
                         "Cache-Control": "no-cache" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] || ".";
  const port = Number(process.argv[3] || 8080);
  const prefix = process.argv[4] || "/";
  const server = await serveStatic(root, port, prefix);
  console.log(`Megacluster Explorer (web) is served at http://127.0.0.1:${server.address().port}${prefix}  (Ctrl+C stops)`);
}

// A course site hosts the page in a folder of its own: serves <site> only under /course/megacluster/ (as
// serve.mjs's prefix does; anything outside it is a 404, as it would be on that site), opens the folder's
// address in headless Chromium and checks that the page starts from there: every request stays under the
// prefix and succeeds, the .wasm comes as application/wasm, the catalog loads, a query (?present=1, the
// presenter mode) is read, and the address the page writes as the class moves keeps the folder.
//   node subpath.mjs --site build/web/site
import { launchChromium } from "./browser.mjs";
import { serveStatic } from "./serve.mjs";
import fs from "node:fs";
import path from "node:path";

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const site = arg("--site");
const prefix = arg("--prefix", "/course/megacluster/");
if (!site || !fs.existsSync(path.join(site, "index.html"))) {
  console.error(`subpath: no web build at ${site} (build the "web" preset first: cmake --build --preset web)`);
  process.exit(1);
}
const fail = (msg) => { console.error("subpath FAILED: " + msg); process.exitCode = 1; };
const appReady = () => {
  try { return !!(window.Module && Module.calledRun && Module._app_frame_count() > 10); } catch (e) { return false; }
};

const server = await serveStatic(site, 0, prefix);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const bad = [];
  let wasmType = "";
  page.on("requestfailed", (r) => bad.push(`${r.url()} failed: ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) bad.push(`${r.url()} answered ${r.status()}`);
    if (r.url().endsWith(".wasm")) wasmType = r.headers()["content-type"] || "";
  });
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.origin === origin && !u.pathname.startsWith(prefix)) bad.push(`${r.url()} is outside ${prefix}`);
  });
  page.on("console", (m) => { if (m.type() === "error") console.error("page:", m.text()); });
  // The folder's own address, as a course page links it (no index.html), with a query.
  await page.goto(`${origin}${prefix}?present=1`);
  await page.waitForFunction(appReady, null, { timeout: 90000 });
  const s = await page.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())));
  console.log(`started under ${prefix}: frames ${s.frame}, panel ${s.active_panel}, presenter ${s.presenter}, ` +
              `wasm ${wasmType}, address ${page.url()}`);
  if (!s.catalog.loaded) fail("catalog not loaded: " + s.catalog.error);
  if (wasmType !== "application/wasm") fail(`index.wasm served as "${wasmType}", not application/wasm`);
  if (s.presenter !== true) fail("?present=1 did not open presenter mode");
  if (!new URL(page.url()).pathname.startsWith(prefix)) fail("the page left its folder: " + page.url());
  for (const b of bad) fail(b);
  if (!process.exitCode) console.log("subpath: OK");
} finally {
  await browser.close();
  server.close();
}

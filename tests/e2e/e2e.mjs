// Browser end-to-end test of the web build: serves <site> on 127.0.0.1, opens it in Debian's headless
// Chromium through playwright-core, waits for frames, clicks a real widget (a catalog column header)
// and a table row, reads the state back through the page's exported functions, saves a screenshot and
// fails if the canvas is blank.
//   node e2e.mjs --site build/web/site --out shot.png --check path/to/mc_check_png
import { launchChromium } from "./browser.mjs";
import { serveStatic } from "./serve.mjs";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const site = arg("--site");
const out = arg("--out", "web.png");
const check = arg("--check");
if (!site || !fs.existsSync(path.join(site, "index.html"))) {
  console.error(`e2e: no web build at ${site} (build the "web" preset first: cmake --build --preset web)`);
  process.exit(1);
}
const fail = (msg) => { console.error("e2e FAILED: " + msg); process.exitCode = 1; };
// Emscripten defines Module._app_frame_count before the WebAssembly instance exists, and calling it then
// throws (Module.asm is still undefined): poll until the runtime has started, never call it earlier.
const appReady = () => {
  try { return !!(window.Module && Module.calledRun && Module._app_frame_count() > 10); } catch (e) { return false; }
};

const server = await serveStatic(site, 0);
const url = `http://127.0.0.1:${server.address().port}/index.html`;
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("console", (m) => { if (m.type() === "error") console.error("page:", m.text()); });
  await page.goto(url);
  await page.waitForFunction(appReady,
                             null, { timeout: 60000 });
  const state = async () => page.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())));
  // The app may render slowly (software WebGL on a busy machine): wait for real frames, not for time.
  const frames = async () => page.evaluate(() => Module._app_frame_count());
  const waitFrames = async (n) => {
    const target = (await frames()) + n;
    await page.waitForFunction((t) => Module._app_frame_count() >= t, target, { timeout: 30000 });
  };
  const click = async (x, y) => {
    await page.mouse.move(x, y);
    await waitFrames(2);
    await page.mouse.down();
    await waitFrames(2);  // ImGui acts on release, and needs a frame in between
    await page.mouse.up();
    await waitFrames(3);
  };
  let s = await state();
  console.log(`frames ${s.frame}, panel ${s.active_panel}, table ${s.catalog.table}, sort ${s.catalog.sort_key}`);
  if (!s.catalog.loaded) fail("catalog not loaded: " + s.catalog.error);
  if (s.active_panel !== "story") fail("the first screen is not the story");
  // The sidebar opens the catalog, and the address follows (history.replaceState): a copied link opens it.
  const side = s.widgets["sidebar.catalog"];
  if (!side) fail("no catalog entry in the sidebar");
  else await click(side[0] + side[2] / 2, side[1] + side[3] / 2);
  s = await state();
  console.log(`after the sidebar click: panel ${s.active_panel}, address ${page.url()}`);
  if (s.active_panel !== "catalog") fail("the sidebar did not open the catalog");
  if (!page.url().endsWith("?panel=catalog/gpus")) fail("the address does not follow the screen: " + page.url());
  // The status bar speaks plainly to a class (no "nvcc ... configure time").
  console.log(`status bar: ${s.status_bar}`);
  if (!/WebAssembly, CPU/.test(s.status_bar) || /nvcc|configure/.test(s.status_bar))
    fail("the status bar does not say \"WebAssembly, CPU\" in plain words: " + s.status_bar);

  // Click the "Memory" column header twice: ascending, then descending by hbm_bytes.
  const hdr = s.widgets["catalog.header.hbm_bytes"];
  if (!hdr || hdr[0] + hdr[2] > 1440) fail("the Memory column header is not on screen");
  else {
    await click(hdr[0] + hdr[2] / 2, hdr[1] + hdr[3] / 2);
    s = await state();
    console.log(`after 1st header click: sort ${s.catalog.sort_key} ${s.catalog.sort_ascending ? "asc" : "desc"}`);
    if (s.catalog.sort_key !== "hbm_bytes" || !s.catalog.sort_ascending) fail("clicking Memory did not sort by it");
    await click(hdr[0] + hdr[2] / 2, hdr[1] + hdr[3] / 2);
    s = await state();
    const rows = s.catalog.row_order;
    console.log(`after 2nd header click: ${s.catalog.sort_ascending ? "asc" : "desc"}; rows ${rows.join(",")}`);
    if (s.catalog.sort_ascending || !rows[0].endsWith("80gb") || !rows.at(-1).endsWith("16gb"))
      fail(`rows not in descending memory order: ${rows}`);
  }
  // Click the V100 32 GB row: the inspector must select it.
  const row = s.widgets["catalog.row.v100-32gb"];
  if (!row) fail("no v100-32gb row on screen");
  else {
    await click(row[0] + 30, row[1] + row[3] / 2);
    s = await state();
    console.log(`after row click: selection ${s.selection.table}/${s.selection.record}`);
    if (s.selection.record !== "v100-32gb") fail("clicking the row did not select it");
  }
  await page.waitForTimeout(300);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  console.log("screenshot " + out);
  if (check) {
    try { console.log(execFileSync(check, [out]).toString().trim()); }
    catch (e) { fail("blank canvas: " + (e.stdout || "") + (e.stderr || "")); }
  }
  // A key tapped within one frame counts (issue 42: F5 pressed three times during slow frames did nothing).
  // press() sends the key's down and up at once, so both reach the page between two frames.
  for (const want of [true, false]) {
    await page.keyboard.press("F5");
    await waitFrames(3);
    s = await state();
    console.log(`after a quick F5: presenter ${s.presenter}`);
    if (s.presenter !== want) fail(`a quick F5 did not ${want ? "open" : "leave"} presenter mode`);
  }
  const foreign = requests.filter((r) => !r.startsWith(`http://127.0.0.1:${server.address().port}/`));
  if (foreign.length) fail("the page requested files from elsewhere: " + foreign.join(", "));
  // A link with ?scenario=ID&step=N opens a class at that step, narrated.
  const p3 = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await p3.goto(url + "?scenario=dgx1-2016&step=2");
  await p3.waitForFunction(appReady,
                           null, { timeout: 60000 });
  await p3.waitForFunction(() => JSON.parse(UTF8ToString(Module._app_state_json())).narration_title !== "",
                           null, { timeout: 30000 }).catch(() => {});
  const s3 = await p3.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())));
  console.log(`?scenario=dgx1-2016&step=2 -> panel ${s3.active_panel}, narration "${s3.narration_title}"`);
  if (!s3.narration_title) fail("the scenario in the URL was not opened");
  if (!p3.url().includes("scenario=dgx1-2016&step=2")) fail("the address lost the step it opened: " + p3.url());
  await p3.screenshot({ path: out.replace(/\.png$/, "-scenario.png") });
  await p3.close();

  // Without WebGL2 the page must say so in words, not show a blank canvas.
  const nogl = await launchChromium({ webgl: false, extraArgs: ["--disable-3d-apis"] });
  try {
    const p2 = await nogl.newPage();
    await p2.goto(url);
    await p2.waitForTimeout(1500);
    const text = await p2.evaluate(() => document.getElementById("overlay").innerText);
    console.log("without WebGL2 the page says: " + text.replace(/\s+/g, " ").slice(0, 120));
    if (!/WebGL2/.test(text)) fail("no readable message when WebGL2 is missing");
  } finally {
    await nogl.close();
  }
} catch (e) {
  fail(String(e && e.stack || e));
} finally {
  await browser.close();
  server.close();
}
console.log(process.exitCode ? "e2e: FAILED" : "e2e: passed");

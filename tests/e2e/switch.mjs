// How long the web build takes to answer a class (issue 41 item 9): a chapter switch on its first and second
// visit in one page, and a scenario step opened by link, in headless Chromium. A benchmark that prints
// figures, not a test.
//   node switch.mjs --site build/web/site [--size 1440x900] [--rounds 2] [--chapters story,perf,...]
//                   [--steps turing-nlg-zero-2020:8,...]
// A switch is timed from the command that opens the chapter (what a click on it does) to the first drawn frame
// that shows it with nothing on it computing (state "busy" false): what the class waits for. The lab trains
// its first run when first opened, so its first visit is that run's length, not a wait. A step is timed the
// same way from the command that opens it. Each figure is wall time on this machine (2 cores shared with
// Chromium's software rasterizer: the load is printed).
import { launchChromium } from "./browser.mjs";
import { serveStatic } from "./serve.mjs";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const site = arg("--site");
const [w, h] = arg("--size", "1440x900").split("x").map(Number);
const rounds = Number(arg("--rounds", "2"));
const only = arg("--chapters", "");
const steps = arg("--steps", "predictable-scaling:3,turing-nlg-zero-2020:8,turing-nlg-zero-2020:9")
                .split(",").filter(Boolean).map((s) => s.split(":")).map(([id, n]) => [id, Number(n)]);
if (!site || !fs.existsSync(path.join(site, "index.html"))) {
  console.error(`switch: no web build at ${site} (build the "web" preset first: cmake --build --preset web)`);
  process.exit(1);
}
const appReady = () => {
  try { return !!(window.Module && Module.calledRun && Module._app_frame_count() > 10); } catch (e) { return false; }
};
const server = await serveStatic(site, 0);
const base = `http://127.0.0.1:${server.address().port}/index.html`;
const browser = await launchChromium();

// In the page: run the command, then wait until the app shows what was asked (`done` on its state) with
// nothing busy, and one more frame is drawn; the milliseconds it took.
const timed = (page, cmd, want) => page.evaluate(([c, want]) => new Promise((resolve, reject) => {
  const t0 = performance.now(), drawn = Module._app_drawn_count();
  Module.ccall("app_command", "string", ["string"], [JSON.stringify(c)]);
  const poll = () => {
    // The state is the last frame's: a frame that shows the chapter with nothing busy, drawn (a still screen
    // draws no frame, so waiting for one more would time the idle redraw instead).
    const s = JSON.parse(UTF8ToString(Module._app_view_json()));
    const shown = (!want.panel || s.active_panel === want.panel) && (!want.step || s.scenario_step === want.step);
    if (shown && !s.busy && Module._app_drawn_count() > drawn) return resolve(performance.now() - t0);
    if (performance.now() - t0 > 180000) return reject(new Error("not shown after 3 minutes"));
    setTimeout(poll, 5);
  };
  poll();
}), [cmd, want]);

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };
const fmt = (ms) => (ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : ms.toFixed(0) + " ms").padStart(9);
try {
  const page = await browser.newPage({ viewport: { width: w, height: h } });
  await page.goto(base);
  await page.waitForFunction(appReady, null, { timeout: 90000 });
  await page.waitForFunction(() => !JSON.parse(UTF8ToString(Module._app_view_json())).busy, null, { timeout: 120000 });
  const panels = (await page.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())).panels))
                   .filter((p) => !only || only.split(",").includes(p));
  console.log(`machine: ${os.cpus().length} cores, load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}; ` +
              `page ${w}x${h}; ${panels.length} chapters, ${rounds} visits each`);
  const times = new Map(panels.map((p) => [p, []]));
  for (let r = 0; r < rounds; ++r)
    for (const p of panels) times.get(p).push(await timed(page, { panel: p }, { panel: p }));
  console.log("chapter".padEnd(14) + [...Array(rounds).keys()].map((r) => `visit ${r + 1}`.padStart(9)).join(""));
  for (const [p, t] of times) console.log(p.padEnd(14) + t.map(fmt).join(""));
  for (let r = 0; r < rounds; ++r) {
    const col = [...times.values()].map((t) => t[r]);
    console.log(`visit ${r + 1}: median ${fmt(median(col)).trim()}, worst ${fmt(Math.max(...col)).trim()}`);
  }
  for (const [id, n] of steps) {
    const ms = await timed(page, { scenario: [id, n] }, { step: n });
    console.log(`step ${id} ${n}: ${fmt(ms).trim()}`);
  }
} finally {
  await browser.close();
  server.close();
}

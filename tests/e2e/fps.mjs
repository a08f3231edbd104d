// Frame rate of the web build in headless Chromium under software rendering (SwiftShader: no GPU, the
// worst case a course's laptop without WebGL acceleration meets), per panel and window size. A benchmark
// that prints figures, not a test: issue 25 asks for at least 30 frames/s with a 16-GPU animation.
//   node fps.mjs --site build/web/site [--panels collective,catalog] [--sizes 1280x720,1440x900]
//                [--seconds 8] [--shots DIR]
// For each panel and size: open ?panel=ID, wait for the app, count Module._app_frame_count() over
// --seconds of wall time while the panel runs as it opens (the collective animation plays by default),
// and with --shots save three screenshots a third of the window apart in time.
import { chromium } from "playwright-core";
import { serveStatic } from "./serve.mjs";
import fs from "node:fs";
import path from "node:path";

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const site = arg("--site");
const panels = arg("--panels", "collective,catalog").split(",");
const sizes = arg("--sizes", "1280x720,1440x900").split(",").map((s) => s.split("x").map(Number));
const seconds = Number(arg("--seconds", "8"));
const shots = arg("--shots");
if (!site || !fs.existsSync(path.join(site, "index.html"))) {
  console.error(`fps: no web build at ${site} (build the "web" preset first: cmake --build --preset web)`);
  process.exit(1);
}
if (shots) fs.mkdirSync(shots, { recursive: true });
const appReady = () => {
  try { return !!(window.Module && Module.calledRun && Module._app_frame_count() > 10); } catch (e) { return false; }
};
const server = await serveStatic(site, 0);
const base = `http://127.0.0.1:${server.address().port}/index.html`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-gpu-sandbox",
         "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-quic"],
});
const rows = [];
try {
  for (const [w, h] of sizes)
    for (const id of panels) {
      const page = await browser.newPage({ viewport: { width: w, height: h } });
      await page.goto(`${base}?panel=${encodeURIComponent(id)}`);
      await page.waitForFunction(appReady, null, { timeout: 60000 });
      const state = async () => page.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())));
      const shown = (await state()).active_panel;
      if (shown !== id) {
        rows.push({ id, w, h, note: `not in this build (opened ${shown})` });
        await page.close();
        continue;
      }
      await page.waitForTimeout(1500);  // past the first frames' font and layout work
      const f0 = await page.evaluate(() => Module._app_frame_count());
      const t0 = Date.now();
      for (let k = 0; k < 3; ++k) {
        await page.waitForTimeout((seconds * 1000) / 3);
        if (shots) await page.screenshot({ path: path.join(shots, `${id}-${w}x${h}-${k + 1}.png`) });
      }
      const f1 = await page.evaluate(() => Module._app_frame_count());
      rows.push({ id, w, h, fps: ((f1 - f0) * 1000) / (Date.now() - t0) });
      await page.close();
    }
} finally {
  await browser.close();
  server.close();
}
console.log("| panel | window | frames/s |\n|---|---|---:|");
for (const r of rows) console.log(`| ${r.id} | ${r.w}x${r.h} | ${r.fps === undefined ? r.note : r.fps.toFixed(1)} |`);
if (shots) console.log(`screenshots (three moments each, with the time spent taking them inside the count): ${shots}`);

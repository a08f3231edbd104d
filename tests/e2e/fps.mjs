// Frame rate of the web build in headless Chromium under software rendering (SwiftShader: no GPU, the
// worst case a course's laptop without WebGL acceleration meets), per panel and window size. A benchmark
// that prints figures, not a test: issue 25 asks for at least 30 frames/s with a 16-GPU animation.
//   node fps.mjs --site build/web/site [--panels collective,pipeline,zero,catalog] [--sizes 1280x720,1440x900]
//                [--seconds 8] [--shots DIR]
//                [--flags "--more --chromium-flags"]
// For each panel and size: open ?panel=ID, wait for the app, and over --seconds of wall time while the panel
// runs as it opens (the collective animation plays by default) count the frames drawn
// (Module._app_drawn_count(): a still screen draws none) and the loop's frames (Module._app_frame_count()),
// and read the CPU time Chromium's processes spent (/proc: the GPU process, where SwiftShader rasterizes,
// and the page's renderer, where the WebAssembly runs) per frame drawn. On this shared 2-core machine the
// frame rate follows the load (printed per row); the CPU time per frame drawn much less so. With --shots
// save three screenshots a third of the window apart in time.
import { launchChromium } from "./browser.mjs";
import { serveStatic } from "./serve.mjs";
import fs from "node:fs";
import path from "node:path";

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const site = arg("--site");
const panels = arg("--panels", "collective,pipeline,zero,catalog").split(",");
const sizes = arg("--sizes", "1280x720,1440x900").split(",").map((s) => s.split("x").map(Number));
const seconds = Number(arg("--seconds", "8"));
const shots = arg("--shots");
const flags = (arg("--flags", "") || "").split(" ").filter(Boolean);
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
const browser = await launchChromium({ extraArgs: flags });
// CPU time (ms) of the Chromium processes this script started, by process type (/proc/PID/stat).
const chromiumCpu = () => {
  const pids = [process.pid], out = { "gpu-process": 0, renderer: 0, other: 0 };
  for (let i = 0; i < pids.length; ++i) {
    try {
      for (const t of fs.readdirSync(`/proc/${pids[i]}/task`))
        for (const c of fs.readFileSync(`/proc/${pids[i]}/task/${t}/children`, "utf8").split(" ").filter(Boolean))
          pids.push(Number(c));
      if (i === 0) continue;
      const cmd = fs.readFileSync(`/proc/${pids[i]}/cmdline`, "utf8");
      if (!cmd.includes("chrom")) continue;
      const st = fs.readFileSync(`/proc/${pids[i]}/stat`, "utf8");
      const f = st.slice(st.lastIndexOf(")") + 2).split(" ");  // utime, stime: fields 14, 15 (ticks of 10 ms)
      const type = (cmd.match(/--type=([a-z-]+)/) || [])[1];
      out[type in out ? type : "other"] += (Number(f[11]) + Number(f[12])) * 10;
    } catch (e) { /* a process that ended meanwhile */ }
  }
  return out;
};
const load = () => fs.readFileSync("/proc/loadavg", "utf8").split(" ")[0];
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
      const counts = () => page.evaluate(() => [Module._app_frame_count(),
        Module._app_drawn_count ? Module._app_drawn_count() : Module._app_frame_count()]);  // older builds
      const [f0, d0] = await counts();
      const c0 = chromiumCpu(), t0 = Date.now();
      for (let k = 0; k < 3; ++k) {
        await page.waitForTimeout((seconds * 1000) / 3);
        if (shots) await page.screenshot({ path: path.join(shots, `${id}-${w}x${h}-${k + 1}.png`) });
      }
      const [f1, d1] = await counts();
      const mirror = (await state()).access_us || { frame: NaN, reading: NaN, max: NaN };
      const c1 = chromiumCpu(), ms = Date.now() - t0, drawn = Math.max(1, d1 - d0);
      rows.push({ id, w, h, fps: ((d1 - d0) * 1000) / ms, loop: ((f1 - f0) * 1000) / ms,
                  gpu: (c1["gpu-process"] - c0["gpu-process"]) / drawn, page: (c1.renderer - c0.renderer) / drawn,
                  cpu: (c1["gpu-process"] - c0["gpu-process"] + c1.renderer - c0.renderer) / (ms / 1000),
                  load: load(), mirror });
      await page.close();
    }
} finally {
  await browser.close();
  server.close();
}
console.log(`Chromium flags added: ${flags.join(" ") || "none"}`);
console.log("| panel | window | frames/s drawn | loop frames/s | CPU ms per frame drawn: GPU process + page | " +
            "CPU ms per s | load | accessibility mirror, us: a frame, a reading, most |\n|---|---|---:|---:|---:|---:|---:|---:|");
for (const r of rows)
  console.log(r.fps === undefined ? `| ${r.id} | ${r.w}x${r.h} | ${r.note} | | | | | |`
    : `| ${r.id} | ${r.w}x${r.h} | ${r.fps.toFixed(1)} | ${r.loop.toFixed(1)} | ` +
      `${r.fps >= 2 ? `${r.gpu.toFixed(0)} + ${r.page.toFixed(0)}` : "(still: nothing drawn)"} | ${r.cpu.toFixed(0)} | ${r.load} | ` +
      `${r.mirror.frame.toFixed(0)}, ${r.mirror.reading.toFixed(0)}, ${r.mirror.max.toFixed(0)} |`);
if (shots) console.log(`screenshots (three moments each, with the time spent taking them inside the count): ${shots}`);

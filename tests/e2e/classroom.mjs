// Classroom check of the web build in headless Chromium, as an instructor preparing a lecture would: every
// step of every shipped scenario at 1440x900 and 1280x720 (a projector), each screenshotted; per step the
// page must report no panel error, draw the highlighted widget, narrate without "nan", and say in plain
// words what computes. On every chapter and every step, at both sizes, axe-core (pinned in package-lock.json)
// checks the page and its accessibility mirror against WCAG 2.1 A and AA (issue 42): any violation fails,
// listed by rule with the screens and elements it was found on. Then a misspelt link, the lab's PNG export
// and a reload that resumes the lab's run.
//   node classroom.mjs --site build/web/site --out DIR [--scenarios scenarios/index.json] [--no-axe]
//                      [--size WxH ...] [--no-tail]
// --size (repeatable) limits the walk to those window sizes, --no-tail leaves out the links and the lab: CTest
// runs one size per test so that the two walks share the two cores with the other tests (issue 43).
import { launchChromium } from "./browser.mjs";
import { serveStatic } from "./serve.mjs";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const site = arg("--site");
const out = arg("--out", "classroom-shots");
const index = arg("--scenarios", path.join(path.dirname(new URL(import.meta.url).pathname), "../../scenarios/index.json"));
if (!site || !fs.existsSync(path.join(site, "index.html"))) {
  console.error(`classroom: no web build at ${site} (cmake --build --preset web first)`);
  process.exit(1);
}
fs.mkdirSync(out, { recursive: true });
const fail = (msg) => { console.error("classroom FAILED: " + msg); process.exitCode = 1; };
const appReady = () => {
  try { return !!(window.Module && Module.calledRun && Module._app_frame_count() > 10); } catch (e) { return false; }
};
const sizes = process.argv.flatMap((a, i) => (a === "--size" ? [process.argv[i + 1].split("x").map(Number)] : []));
const tail = !process.argv.includes("--no-tail");
const ids = JSON.parse(fs.readFileSync(index, "utf8")).scenarios.map((f) => f.replace(/\.json$/, ""));

const server = await serveStatic(site, 0);
const base = `http://127.0.0.1:${server.address().port}/index.html`;
const browser = await launchChromium();
const state = (page) => page.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())));
const command = (page, cmd) => page.evaluate((c) => Module.ccall("app_command", "string", ["string"], [c]),
                                            JSON.stringify(cmd));
const frames = (page, n) => page.evaluate((k) => new Promise((res) => {
  const t = Module._app_frame_count() + k;
  const poll = () => (Module._app_frame_count() >= t ? res() : setTimeout(poll, 20));
  poll();
}), n);

// axe-core on the page as it is now: what violates WCAG 2.1 A/AA, gathered by rule over every screen.
const axeSource = process.argv.includes("--no-axe") ? null
  : fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const axeTags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const axeFound = new Map();  // rule id -> { impact, help, screens: [], nodes: Set }
let axeRuns = 0, axeMs = 0;
const axeCheck = async (page, where) => {
  if (!axeSource) return;
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ content: axeSource });
  const t0 = Date.now();
  const violations = await page.evaluate((tags) => axe.run(document, {
    runOnly: { type: "tag", values: tags }, resultTypes: ["violations"],
  }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary.replace(/\s+/g, " ").slice(0, 160)}`),
  }))), axeTags);
  axeMs += Date.now() - t0;
  ++axeRuns;
  for (const v of violations) {
    const f = axeFound.get(v.id) || { impact: v.impact, help: v.help, screens: [], nodes: new Set() };
    f.screens.push(where);
    for (const n of v.nodes) f.nodes.add(n);
    axeFound.set(v.id, f);
  }
};

// The page's answers to links it cannot use, and the lab's export and kept run.
async function linksAndLab() {
  // A misspelt link explains itself on the page.
  const bad = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await bad.goto(base + "?scenario=gpt3-on-the-machin&step=2");
  await bad.waitForFunction(appReady, null, { timeout: 60000 });
  await frames(bad, 5);
  const sb = await state(bad);
  if (!/did you mean "gpt3-on-the-machine"/.test(sb.narration)) fail("a misspelt link does not say which one was meant");
  await bad.screenshot({ path: path.join(out, "bad-link-1280x720.png") });
  await bad.close();
  // A step the link cannot use is named on the page with the fix, and the class opens at its start.
  const badStep = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await badStep.goto(base + "?scenario=dgx1-2016&step=two");
  await badStep.waitForFunction(appReady, null, { timeout: 60000 });
  await frames(badStep, 5);
  const bs = await state(badStep);
  // Named at the top of the main view, where the class looks (the address notice), not in the status bar.
  console.log(`?scenario=dgx1-2016&step=two -> step ${bs.scenario_step}, notice "${bs.notice}"`);
  if (!/step="two" is not a step number/.test(bs.notice)) fail("a link's unusable step is not named: " + bs.notice);
  if (bs.scenario_step !== 1) fail(`a link with an unusable step should open the class at step 1, not ${bs.scenario_step}`);
  await badStep.close();
  // The lab: export the chart as a PNG (a download), then a reload resumes the run.
  const lab = await browser.newPage({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
  await lab.goto(base + "?panel=lab");
  await lab.waitForFunction(appReady, null, { timeout: 60000 });
  await frames(lab, 60);
  let ls = await state(lab);
  const btn = ls.widgets["lab.export_png"];
  if (!btn) fail("no Export PNG button in the lab");
  else {
    const download = lab.waitForEvent("download", { timeout: 20000 });
    await lab.mouse.move(btn[0] + btn[2] / 2, btn[1] + btn[3] / 2);
    await frames(lab, 2);
    await lab.mouse.down();
    await frames(lab, 2);
    await lab.mouse.up();
    const d = await download;
    const file = path.join(out, "lab-" + d.suggestedFilename());
    await d.saveAs(file);
    const head = fs.readFileSync(file).subarray(0, 8).toString("latin1");
    if (head !== "\x89PNG\r\n\x1a\n") fail("the exported chart is not a PNG");
    console.log(`lab export: ${file} (${fs.statSync(file).size} bytes)`);
  }
  await frames(lab, 30);
  ls = await state(lab);
  const before = ls.shown.train ? ls.shown.train.step : 0;
  await lab.waitForTimeout(6000);  // the run is kept every second
  ls = await state(lab);
  const kept = ls.shown.train ? ls.shown.train.step : 0;
  await lab.reload();
  await lab.waitForFunction(appReady, null, { timeout: 60000 });
  await frames(lab, 5);
  ls = await state(lab);
  const resumed = ls.shown.train ? ls.shown.train.step : 0;
  console.log(`lab: step ${before} -> ${kept} before the reload, ${resumed} after it`);
  if (!(resumed > 0 && resumed + 5 >= before)) fail(`a reload did not resume the run (step ${resumed} after ${kept})`);
  await lab.screenshot({ path: path.join(out, "lab-after-reload-1440x900.png") });
  await lab.close();
}

try {
  for (const [w, h] of sizes.length ? sizes : [[1440, 900], [1280, 720]]) {
    const page = await browser.newPage({ viewport: { width: w, height: h } });
    page.on("console", (m) => { if (m.type() === "error") console.error("page:", m.text()); });
    await page.goto(base);
    await page.waitForFunction(appReady, null, { timeout: 60000 });
    let s = await state(page);
    if (!/WebAssembly, CPU/.test(s.status_bar)) fail(`status bar at ${w}: ${s.status_bar}`);
    // Every chapter as a fresh page opens it.
    for (const id of s.panels) {
      const err = await command(page, { panel: id });
      if (err) fail(`chapter ${id}: ${err}`);
      await frames(page, 6);
      await page.waitForFunction(() => !JSON.parse(UTF8ToString(Module._app_view_json())).busy, null,
                                 { timeout: 60000 }).catch(() => fail(`chapter ${id}: still busy`));
      await frames(page, 4);
      await axeCheck(page, `chapter ${id} at ${w}x${h}`);
    }
    for (const id of ids) {
      for (let step = 1; step <= 12; ++step) {
        const t0 = Date.now();
        const err = await command(page, { scenario: [id, step] });
        if (err) fail(`${id} step ${step}: ${err}`);
        await frames(page, 4);
        await page.waitForFunction(() => !JSON.parse(UTF8ToString(Module._app_view_json())).busy, null,
                                   { timeout: 120000 }).catch(() => fail(`${id} step ${step}: still busy`));
        await frames(page, 4);
        s = await state(page);
        const shot = path.join(out, `${id}-${step}-${w}x${h}.png`);
        await page.screenshot({ path: shot });
        const where = `${id} step ${step} at ${w}x${h}`;
        if (s.errors.length) fail(`${where}: ${s.errors.join(" | ")}`);
        if (/\bnan\b|\binf\b/i.test(s.narration)) fail(`${where}: non-finite number in the narration`);
        if (s.highlight_widget && !s.widgets[s.highlight_widget]) fail(`${where}: ${s.highlight_widget} not drawn`);
        await axeCheck(page, where);
        console.log(`${where}: panel ${s.active_panel}${s.tab ? "/" + s.tab : ""}, ${shot} (${Date.now() - t0} ms)`);
        if (s.scenario_step >= s.scenario_steps) break;
      }
    }
    await page.close();
  }
  if (tail) await linksAndLab();
  if (axeSource) {
    console.log(`axe-core (${axeTags.join(", ")}): ${axeRuns} screens checked, ${(axeMs / Math.max(1, axeRuns)).toFixed(0)} ms ` +
                `each, ${axeFound.size} rules violated`);
    for (const [id, f] of axeFound) {
      fail(`axe ${id} (${f.impact}): ${f.help}; on ${f.screens.length} screens, first ${f.screens[0]}; ` +
           `${f.nodes.size} elements, e.g.\n    ${[...f.nodes].slice(0, 4).join("\n    ")}`);
    }
  }
} catch (e) {
  fail(String(e && e.stack || e));
} finally {
  await browser.close();
  server.close();
}
console.log(process.exitCode ? "classroom: FAILED" : "classroom: passed");

// The accessibility mirror in a real browser (issue 42): Chromium's own accessibility tree (the DevTools
// protocol's Accessibility.getFullAXTree, what a screen reader is given) holds the chapters as buttons, the
// chapter shown as the current one, a panel's sliders with their values and a scenario step's narration; the
// keyboard alone (Tab to a chapter, Enter; an arrow on a slider) changes the app, with no pointer event, and
// plays a whole scenario from the gallery and trains the lab for 20 steps; ImGui's own arrow navigation on the
// canvas moves the DOM's focus; the skip link comes first; a reader who asked for less motion finds the
// animations paused.
//   node access.mjs --site build/web/site
import { launchChromium } from "./browser.mjs";
import { serveStatic } from "./serve.mjs";
import fs from "node:fs";
import path from "node:path";

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const site = arg("--site");
if (!site || !fs.existsSync(path.join(site, "index.html"))) {
  console.error(`access: no web build at ${site} (build the "web" preset first: cmake --build --preset web)`);
  process.exit(1);
}
const fail = (msg) => { console.error("access FAILED: " + msg); process.exitCode = 1; };
const appReady = () => {
  try { return !!(window.Module && Module.calledRun && Module._app_frame_count() > 10); } catch (e) { return false; }
};

const server = await serveStatic(site, 0);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.on("console", (m) => { if (m.type() === "error") console.error("page:", m.text()); });
  const state = () => page.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())));
  const waitFrames = async (n) => {
    const t = (await page.evaluate(() => Module._app_frame_count())) + n;
    await page.waitForFunction((k) => Module._app_frame_count() >= k, t, { timeout: 30000 });
  };
  const cdp = await page.context().newCDPSession(page);
  const axTree = async () => {
    const { nodes } = await cdp.send("Accessibility.getFullAXTree");
    return nodes.filter((n) => !n.ignored).map((n) => {
      const props = Object.fromEntries((n.properties || []).map((p) => [p.name, p.value && p.value.value]));
      return { role: n.role && n.role.value, name: (n.name && n.name.value) || "", value: n.value && n.value.value,
               props };
    });
  };

  await page.goto(`${origin}/index.html`);
  await page.waitForFunction(appReady, null, { timeout: 90000 });
  await waitFrames(5);
  let ax = await axTree();
  const buttons = ax.filter((n) => n.role === "button");
  console.log(`story: ${ax.length} accessibility nodes, ${buttons.length} buttons`);
  if (!buttons.some((n) => n.name === "Hardware catalog")) fail("no button named 'Hardware catalog' (a chapter)");
  if (ax.filter((n) => n.role === "StaticText" || n.role === "paragraph").length < 10)
    fail("the story's text is not in the accessibility tree");

  // The keyboard alone: the skip link first, then Tab to the catalog's chapter and Enter.
  await page.keyboard.press("Tab");
  const first = await page.evaluate(() => document.activeElement && document.activeElement.id);
  if (first !== "skip") fail(`the first Tab stop is '${first}', not the skip link`);
  let found = false;
  for (let i = 0; i < 60 && !found; ++i) {
    await page.keyboard.press("Tab");
    found = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute("aria-label") ===
                                      "Hardware catalog");
  }
  if (!found) fail("Tab never reached the 'Hardware catalog' chapter");
  await page.keyboard.press("Enter");
  await waitFrames(6);
  let s = await state();
  if (s.active_panel !== "catalog") fail(`Enter on the chapter opened '${s.active_panel}', not the catalog`);
  const current = await page.evaluate(() => {
    const e = document.querySelector('#a11y [aria-current="page"]');
    return e && e.getAttribute("aria-label");
  });
  if (current !== "Hardware catalog") fail(`the current chapter reads '${current}'`);
  // The catalog's records are a table with header cells, not lines of text (WCAG 1.3.1).
  await new Promise((r) => setTimeout(r, 300));
  const records = await page.evaluate(() => {
    const t = [...document.querySelectorAll("#a11y section > table")].find((e) =>
      [...e.querySelectorAll("thead th")].some((c) => c.textContent === "Name"));
    return t && { caption: t.caption && t.caption.textContent, rows: t.querySelectorAll("tbody tr").length,
                  cols: t.querySelectorAll("thead th[scope=col]").length };
  });
  if (!records || records.rows < 3 || records.cols < 3)
    fail(`the catalog is not a table with header cells: ${JSON.stringify(records)}`);
  else console.log(`catalog table: ${records.caption}, ${records.rows} rows, ${records.cols} columns`);

  // A slider: the perf panel's nodes, by the keyboard (an arrow), as a screen reader's user would.
  await page.evaluate(() => {
    const e = [...document.querySelectorAll("#a11y button")].find((b) => b.getAttribute("aria-label") ===
                                                                      "Train a transformer");
    e.focus();
  });
  await page.keyboard.press("Enter");
  await waitFrames(8);
  const slider = async () => page.evaluate(() => {
    const e = document.querySelector('#a11y [role=slider][aria-label="nodes"]');
    return e && { value: e.getAttribute("aria-valuenow"), text: e.getAttribute("aria-valuetext") };
  });
  const before = await slider();
  if (!before) fail("the perf panel's nodes slider is not mirrored");
  else {
    await page.focus('#a11y [role=slider][aria-label="nodes"]');
    await page.keyboard.press("ArrowLeft");
    await waitFrames(8);
    const after = await slider();
    console.log(`nodes slider: ${before.text} -> ${after && after.text}`);
    if (!after || after.value === before.value) fail("an arrow on the nodes slider changed nothing in the app");
    await new Promise((r) => setTimeout(r, 300));
    ax = await axTree();
    const node = ax.find((n) => n.role === "slider" && n.name === "nodes");
    // The tree has the slider's number; its words ("127 nodes") are the node's aria-valuetext, which this
    // Chromium's DevTools protocol reports as "" for every node.
    if (!node || String(node.value) !== after.value)
      fail(`the slider's value is not in the accessibility tree: ${JSON.stringify(node)}`);
    if (!/^\d+ nodes?$/.test(after.text || "")) fail(`the slider's value text reads '${after.text}'`);
  }

  // Focus both ways: the DOM's focus on the slider put ImGui's keyboard navigation there; back on the canvas
  // (Escape), an arrow moves ImGui's navigation, and the DOM's focus follows it to that control's mirror.
  await page.keyboard.press("Escape");
  await waitFrames(4);
  const onCanvas = await page.evaluate(() => document.activeElement && document.activeElement.id);
  if (onCanvas !== "canvas") fail(`Escape in the mirror left the focus on '${onCanvas}', not the canvas`);
  await page.keyboard.press("ArrowDown");
  await waitFrames(12);
  const followed = await page.evaluate(() => {
    const a = document.activeElement;
    return a && { id: a.id, mirrored: !!a.closest("#a11y"), name: a.getAttribute("aria-label") || a.textContent };
  });
  console.log(`focus: ArrowDown on the canvas moved the DOM's focus to ${JSON.stringify(followed)}`);
  if (!followed || !followed.mirrored || followed.name === "nodes")
    fail(`ImGui's arrow navigation did not move the DOM's focus to another control: ${JSON.stringify(followed)}`);

  // The page says once that the app is ready, naming the chapter (a screen reader reads the page on load,
  // before the app has drawn).
  const ready = await page.evaluate(() => {
    const e = document.getElementById("a11y-ready");
    return e && { role: e.getAttribute("role"), text: e.textContent };
  });
  if (!ready || ready.role !== "status" || !/^Megacluster Explorer is ready: .+\. Tab moves/.test(ready.text))
    fail(`no status message says the app is ready: ${JSON.stringify(ready)}`);

  // Reordering the mirror's nodes never takes the focus off one: [a b c d e f] to [a c b d e f] with c focused
  // moves b, not c (moving c, as putting each node in place in turn did, blurs it).
  const reorder = await page.evaluate(() => {
    const p = document.createElement("div");
    document.getElementById("a11y").appendChild(p);
    const els = [..."abcdef"].map((ch) => {
      const b = p.appendChild(document.createElement("button"));
      b.textContent = ch;
      return b;
    });
    els[2].focus();
    Module.a11yOrder(p, [0, 2, 1, 3, 4, 5].map((i) => els[i]));
    const out = { order: [...p.children].map((c) => c.textContent).join(""), focus: document.activeElement.textContent };
    p.remove();
    return out;
  });
  if (reorder.order !== "acbdef" || reorder.focus !== "c")
    fail(`reordering the mirror moved the focused node: ${JSON.stringify(reorder)}`);

  // A chart is a figure whose caption is the engine's one-sentence summary, holding its data as a table with
  // header cells (WCAG 1.1.1): the perf panel's memory bar.
  const chart = await page.evaluate(() => {
    const f = [...document.querySelectorAll("#a11y figure")].find((e) =>
      e.firstChild.textContent.startsWith("Memory per GPU"));
    const t = f && f.querySelector("table");
    return f && { caption: f.firstChild.textContent, rows: t ? t.querySelectorAll("tbody tr").length : 0,
                  cols: t ? [...t.querySelectorAll("thead th[scope=col]")].map((c) => c.textContent) : [] };
  });
  if (!chart) fail("the perf panel's memory bar is not a figure in the mirror");
  else {
    console.log(`chart: ${chart.caption} (${chart.rows} rows)`);
    if (!/ GiB in all; the largest is /.test(chart.caption)) fail(`the memory figure's caption reads '${chart.caption}'`);
    if (chart.cols.join("|") !== "part|Memory per GPU (GiB)") fail(`the memory table's header is ${chart.cols}`);
    if (chart.rows < 3) fail(`the memory table has ${chart.rows} rows`);
  }
  ax = await axTree();
  for (const role of ["figure", "table", "columnheader", "rowheader"])
    if (!ax.some((n) => n.role === role)) fail(`no ${role} in the accessibility tree of the perf panel`);
  // A screen reader names a figure by what the tree gives it, not by the text inside it: the caption.
  const figure = ax.find((n) => n.role === "figure" && n.name.startsWith("Memory per GPU"));
  if (!figure)
    fail(`the memory figure has no accessible name from its caption (figures: ${
        JSON.stringify(ax.filter((n) => n.role === "figure").map((n) => n.name).slice(0, 3))})`);
  // Its table is named by its caption too, and neither caption is read again as text of its own (Orca read
  // each twice: as the name, then as the caption).
  if (!ax.some((n) => n.role === "table" && n.name === "Memory per GPU: data"))
    fail("the memory figure's table is not named 'Memory per GPU: data'");
  if (figure) {
    const again = ax.filter((n) => n.role !== "figure" && n.name === figure.name).map((n) => n.role);
    if (again.length) fail(`the memory figure's caption is in the tree again as ${JSON.stringify(again)}`);
  }
  const tableAgain = ax.filter((n) => n.role !== "table" && n.name === "Memory per GPU: data").map((n) => n.role);
  if (tableAgain.length) fail(`the memory table's caption is in the tree again as ${JSON.stringify(tableAgain)}`);

  // A scenario step's narration is in a polite live region.
  await page.goto(`${origin}/index.html?scenario=dgx1-2016&step=2`);
  await page.waitForFunction(appReady, null, { timeout: 90000 });
  await page.waitForFunction(() => !JSON.parse(UTF8ToString(Module._app_view_json())).busy, null,
                             { timeout: 120000 });
  await waitFrames(5);
  s = await state();
  const live = await page.evaluate(() => {
    const e = document.querySelector('#a11y [aria-live="polite"]');
    return e && e.textContent;
  });
  if (!live || live !== s.narration) fail(`the live region reads '${live}', the narration is '${s.narration}'`);

  // The keyboard alone, start to end, with no pointer event: a scenario opened from the gallery and played to
  // its last step, then the lab trained for 20 steps and paused.
  await page.goto(`${origin}/index.html`);
  await page.waitForFunction(appReady, null, { timeout: 90000 });
  await page.evaluate(() => {
    window.pointerEvents = 0;
    for (const t of ["pointerdown", "mousedown", "click", "touchstart"])
      window.addEventListener(t, (e) => { if (e.isTrusted && e.detail !== 0) ++window.pointerEvents; }, true);
  });
  const focused = () => page.evaluate(() => document.activeElement && document.activeElement.getAttribute("aria-label"));
  // Tab (from wherever the focus is) until the control named `name` has the focus (a chapter's entry may carry
  // its number: "7  Scenarios").
  const tabTo = async (name) => {
    for (let i = 0; i < 150; ++i) {
      const n = await focused();
      if (n === name || (n && /^\d+  /.test(n) && n.replace(/^\d+  /, "") === name)) return true;
      await page.keyboard.press("Tab");
    }
    fail(`Tab never reached '${name}'`);
    return false;
  };
  const idle = () => page.waitForFunction(() => !JSON.parse(UTF8ToString(Module._app_view_json())).busy, null,
                                          { timeout: 120000 });
  const scenarioTitle = "Failures at scale: checkpoints and restarts over a month";
  if (await tabTo("Scenarios")) {
    await page.keyboard.press("Enter");
    await waitFrames(8);
    if (await tabTo("Open " + scenarioTitle)) {
      await page.keyboard.press("Enter");
      await waitFrames(8);
      await idle();
      s = await state();
      const steps = s.scenario_steps;
      for (let k = 0; k < 20 && s.scenario_step < steps; ++k) {
        const at = s.scenario_step;
        if ((await focused()) !== "Next step" && !(await tabTo("Next step"))) break;
        await page.keyboard.press("Enter");
        await page.waitForFunction((n) => JSON.parse(UTF8ToString(Module._app_view_json())).scenario_step > n, at,
                                   { timeout: 60000 });
        await idle();
        s = await state();
      }
      console.log(`keyboard: '${scenarioTitle}' played to step ${s.scenario_step} of ${steps}`);
      if (!(steps > 1 && s.scenario_step === steps)) fail(`the keyboard reached step ${s.scenario_step} of ${steps}`);
    }
  }
  if (await tabTo("Training lab")) {
    await page.keyboard.press("Enter");
    await waitFrames(8);
    // The run's length typed into its field (a confirmed entry), then Start; the run trains its 20 steps.
    if (await tabTo("steps")) {
      await page.keyboard.press("End");
      for (let i = 0; i < 8; ++i) await page.keyboard.press("Backspace");
      await page.keyboard.type("20");
      await page.keyboard.press("Enter");
      await waitFrames(8);
    }
    if (await tabTo("Start")) {
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => {
        const t = JSON.parse(UTF8ToString(Module._app_state_json())).shown.train;
        return t && t.step >= 20;
      }, null, { timeout: 180000 }).catch(() => fail("the lab did not train 20 steps"));
      s = await state();
      const t = s.shown.train || {};
      console.log(`keyboard: the lab trained ${t.step} steps, loss ${t.losses && t.losses[t.losses.length - 1]}`);
      if (t.step !== 20) fail(`the lab trained ${t.step} steps, not the 20 typed`);
    }
  }
  const pointer = await page.evaluate(() => window.pointerEvents);
  if (pointer !== 0) fail(`${pointer} pointer events during the keyboard-only walk`);

  // prefers-reduced-motion: the animations start paused.
  const still = await browser.newPage({ viewport: { width: 1280, height: 720 }, reducedMotion: "reduce" });
  await still.goto(`${origin}/index.html?panel=pipeline`);
  await still.waitForFunction(appReady, null, { timeout: 90000 });
  const playing = (await still.evaluate(() => JSON.parse(UTF8ToString(Module._app_state_json())))).animations_playing;
  if (!Array.isArray(playing) || playing.some((p) => p)) fail(`with reduced motion the animations play: ${playing}`);
  await still.close();

  // A control below the fold (the catalog's Export CSV at 320 px) is in the mirror; focused, ImGui scrolls it
  // into view and its mirror node lies over it: the mirror itself never scrolls (it did, 168 px, and every
  // node then lay above what it mirrors).
  const narrow = await browser.newPage({ viewport: { width: 320, height: 640 } });
  await narrow.goto(`${origin}/index.html?panel=catalog`);
  await narrow.waitForFunction(appReady, null, { timeout: 90000 });
  const exportNode = () => [...document.querySelectorAll("#a11y *")].find(
      (x) => x.children.length === 0 && (x.textContent || "").trim() === "Export CSV");
  const reachedExport = await narrow.evaluate((f) => { const e = eval(f)(); if (!e) return false; e.focus(); return true; },
                                        exportNode.toString());
  if (!reachedExport) fail("at 320 px the catalog's 'Export CSV', below the fold, is not in the mirror");
  await narrow.waitForTimeout(1000);
  const where = await narrow.evaluate((f) => {
    const e = eval(f)();
    const placed = parseFloat(e.style.top) / 100 * window.innerHeight;  // where the tree says ImGui drew it
    return { top: e.getBoundingClientRect().top, placed, scrolled: document.getElementById("a11y").scrollTop };
  }, exportNode.toString());
  if (where.scrolled !== 0 || Math.abs(where.top - where.placed) > 2 || where.top < 0 || where.top > 640 - 20)
    fail(`focused below the fold, 'Export CSV' lies at ${where.top} px, drawn at ${where.placed} px, the mirror ` +
         `scrolled ${where.scrolled} px`);
  await narrow.close();
  if (!process.exitCode) console.log("access: OK");
} finally {
  await browser.close();
  server.close();
}

// platform.js - the browser side of web/main.cpp's WebPlatform (downloads, links, the page address,
// localStorage, the window size), passed to the linker with --js-library so that the C++ file holds no
// JavaScript and every C++ file of the project can be formatted (scripts/format.sh). Each function is
// declared extern "C" in web/main.cpp with the same name and arguments. Strings cross as UTF-8 pointers;
// a returned string is malloc'd here and freed by the caller.
mergeInto(LibraryManager.library, {
  js_download: function (name, data, len) {
    const bytes = HEAPU8.slice(data, data + len);
    const blob = new Blob([bytes], {type: 'application/octet-stream'});
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = UTF8ToString(name);
    document.body.appendChild(a);
    a.click();
    setTimeout(() => {
      URL.revokeObjectURL(a.href);
      a.remove();
    }, 1000);
  },

  js_open_url: function (url) {
    window.open(UTF8ToString(url), '_blank', 'noopener');
  },

  js_query_param__deps: ['malloc'],
  js_query_param: function (key) {
    const v = new URLSearchParams(window.location.search).get(UTF8ToString(key)) || '';
    const n = lengthBytesUTF8(v) + 1;
    const p = _malloc(n);
    stringToUTF8(v, p, n);
    return p;
  },

  js_query_string__deps: ['malloc'],
  js_query_string: function () {
    const v = window.location.search || '';
    const n = lengthBytesUTF8(v) + 1;
    const p = _malloc(n);
    stringToUTF8(v, p, n);
    return p;
  },

  // The address follows the screen in place: replaceState adds no history entry (Back leaves the page, as
  // before) and reloads nothing; the path (a course site's sub-path) and a #fragment stay as they are.
  js_set_address: function (query) {
    const u = new URL(window.location.href);
    u.search = UTF8ToString(query);
    if (u.href !== window.location.href) window.history.replaceState(window.history.state, '', u.href);
  },

  // localStorage holds strings: bytes go in as base64 (a checkpoint of the lab's model is a few hundred KB,
  // well inside the browser's quota). A full quota or disabled storage is reported, never fatal.
  js_store: function (key, data, len) {
    try {
      const bytes = HEAPU8.subarray(data, data + len);
      let bin = '';
      for (let i = 0; i < bytes.length; i += 0x8000) {
        bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
      }
      window.localStorage.setItem('megacluster.' + UTF8ToString(key), btoa(bin));
      return 1;
    } catch (e) {
      return 0;
    }
  },

  js_stored__deps: ['malloc'],
  js_stored: function (key, len) {
    let bin = '';
    try {
      bin = atob(window.localStorage.getItem('megacluster.' + UTF8ToString(key)) || '');
    } catch (e) {
      bin = '';
    }
    const p = _malloc(bin.length + 1);
    for (let i = 0; i < bin.length; ++i) HEAPU8[p + i] = bin.charCodeAt(i);
    HEAP32[len >> 2] = bin.length;
    return p;
  },

  // The accessibility mirror (ui/access.h): the frame's regions, controls and text as DOM nodes over the
  // canvas, changed only where the frame changed (ops from access::diff: add, set, del, order). Activating a
  // node (Enter, Space, a screen reader's click) presses the control in ImGui on the next frame; a slider's
  // or field's new value is set the same way. The mirror takes no pointer events, so a mouse click reaches
  // only the canvas and no control is pressed twice.
  js_access_apply: function (ops_text) {
    const root = document.getElementById('a11y');
    if (!root) return;
    if (!Module.a11y) {
      Module.a11y = new Map();  // keys in the mirror: web/shell.html
      // The mirror never scrolls: focusing a node below the fold (a control scrolled out of its window's view)
      // made the browser scroll this box, and every node then lay 168 px above what it mirrors. ImGui scrolls
      // its own window to the focused control; the mirror follows through the nodes' boxes.
      root.addEventListener('scroll', () => { root.scrollTop = 0; root.scrollLeft = 0; });
      // Puts `els`, children of `p`, in that order with as few moves as it takes: the longest run of them
      // already in order stays where it is and the rest go between, because moving a node takes the focus off
      // it (a slider being changed lost its focus when the lines around it were renumbered). The focused node
      // is always in the run that stays. A section's heading or a figure's caption is not in `els` and stays
      // first. (e2e.access calls it on its own nodes.)
      Module.a11yOrder = (p, els) => {
        const at = new Map();
        for (let i = 0; i < p.children.length; ++i) at.set(p.children[i], i);
        const focus = els.indexOf(document.activeElement), fat = focus >= 0 ? at.get(els[focus]) : undefined;
        const tails = [], prev = new Array(els.length).fill(-1);  // longest increasing run of positions
        els.forEach((el, i) => {
          const v = at.has(el) ? at.get(el) : -1;
          if (v < 0) return;
          if (fat !== undefined && i !== focus && (i < focus ? v > fat : v < fat)) return;  // would move the focus
          let lo = 0, hi = tails.length;
          while (lo < hi) {
            const mid = (lo + hi) >> 1;
            if (at.get(els[tails[mid]]) < v) lo = mid + 1;
            else hi = mid;
          }
          if (lo > 0) prev[i] = tails[lo - 1];
          tails[lo] = i;
        });
        const keep = new Set();
        for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) keep.add(i);
        for (let i = els.length - 1; i >= 0; --i)
          if (!keep.has(i)) p.insertBefore(els[i], i + 1 < els.length ? els[i + 1] : null);
      };
    }
    const nodes = Module.a11y;
    const press = (id) => () => Module._app_access_press(id);
    const set = (id, el) => () => {
      const v = parseFloat(el.value);
      if (isFinite(v)) Module._app_access_set(id, v);
    };
    const create = (id, role) => {
      let el;
      if (role === 'region') {
        el = document.createElement('section');
        const h = document.createElement('h2');
        h.id = 'a11y-h' + id;
        el.appendChild(h);
        el.setAttribute('aria-labelledby', h.id);
      } else if (role === 'slider') {
        // A div with the slider role, not <input type=range>: Chromium reads a range input's value text from
        // its number and drops aria-valuetext ("127", not "127 nodes").
        el = document.createElement('div');
        el.setAttribute('role', 'slider');
        el.tabIndex = 0;
        el.addEventListener('keydown', (ev) => {
          const lo = +el.getAttribute('aria-valuemin'), hi = +el.getAttribute('aria-valuemax');
          const now = +el.getAttribute('aria-valuenow'), step = +el.dataset.step || 1;
          const to = {ArrowLeft: now - step, ArrowDown: now - step, ArrowRight: now + step, ArrowUp: now + step,
                      PageDown: now - 10 * step, PageUp: now + 10 * step, Home: lo, End: hi}[ev.key];
          if (to === undefined || !isFinite(lo) || !isFinite(hi)) return;
          ev.preventDefault();
          const v = Math.min(hi, Math.max(lo, to));
          el.setAttribute('aria-valuenow', String(v));
          Module._app_access_set(id, v);
        });
      } else if (role === 'field') {
        el = document.createElement('input');
        el.type = 'number';
        el.step = 'any';
        el.addEventListener('change', set(id, el));
      } else if (role === 'tablist' || role === 'listbox') {
        el = document.createElement('div');  // a container of tabs or options (ARIA requires it), not pressed
        el.setAttribute('role', role);
      } else if (role === 'figure') {
        // A chart: its caption says what it is and what it shows (the engine's summary, core/chart_data.h),
        // its data is the table inside it.
        el = document.createElement('figure');
        const caption = el.appendChild(document.createElement('figcaption'));
        // Named by its caption: Chromium gave figures an empty accessible name from the caption alone. The
        // caption itself is hidden from the tree, or Orca read the summary twice: as the figure's name on
        // entering it and again as the caption's text (aria-labelledby still reads a hidden element).
        caption.id = 'a11y-cap' + id;
        caption.setAttribute('aria-hidden', 'true');
        el.setAttribute('aria-labelledby', caption.id);
      } else if (role === 'table') {
        el = document.createElement('table');
      } else if (role === 'text') {
        el = document.createElement('p');
      } else if (role === 'live' || role === 'status') {
        el = document.createElement('div');
        el.className = 'live';
        if (role === 'live') el.setAttribute('aria-live', 'polite');
        else el.setAttribute('role', 'status');
      } else {
        el = document.createElement('button');
        el.type = 'button';
        el.addEventListener('click', press(id));
        if (role === 'tab') el.setAttribute('role', 'tab');
        if (role === 'checkbox') el.setAttribute('role', 'checkbox');
        if (role === 'radio') el.setAttribute('role', 'radio');
      }
      const container = role === 'region' || role === 'tablist' || role === 'listbox' || role === 'figure';
      if (!container && role !== 'live' && role !== 'status') el.classList.add('n');
      // The DOM's focus on a control (Tab, a screen reader's cursor) moves ImGui's keyboard navigation there.
      if (el.tabIndex >= 0) el.addEventListener('focus', () => Module._app_access_focus(id));
      if (role === 'combo') el.setAttribute('aria-haspopup', 'listbox');
      el.id = 'a11y-' + id;
      return {el: el, role: role, parent: 0};
    };
    const attr = (el, name, v) => {
      if (v === null) el.removeAttribute(name);
      else if (el.getAttribute(name) !== String(v)) el.setAttribute(name, String(v));
    };
    for (const o of JSON.parse(UTF8ToString(ops_text))) {
      if (o.op === 'del') {
        const e = nodes.get(o.id);
        if (e) e.el.remove();
        nodes.delete(o.id);
        continue;
      }
      if (o.op === 'focus') {
        // ImGui's keyboard navigation moved (Ctrl+Tab, arrows on the canvas): the DOM's focus follows it, so a
        // screen reader says where it went (its node is in place: the app sends this last).
        const e = nodes.get(o.id);
        if (e && e.el.tabIndex >= 0 && document.activeElement !== e.el) e.el.focus({preventScroll: true});
        continue;
      }
      if (o.op === 'order') {
        const p = o.id === 0 ? root : nodes.get(o.id) && nodes.get(o.id).el;
        if (!p) continue;
        Module.a11yOrder(p, o.ids.map((id) => nodes.get(id)).filter((e) => e).map((e) => e.el));
        continue;
      }
      let e = nodes.get(o.id);
      if (!e || (o.role && o.role !== e.role)) {
        if (e) e.el.remove();
        e = create(o.id, o.role);
        nodes.set(o.id, e);
      }
      const el = e.el;
      if ('parent' in o || !el.parentNode) {
        if ('parent' in o) e.parent = o.parent;
        const p = e.parent === 0 ? root : nodes.get(e.parent) && nodes.get(e.parent).el;
        if (p && el.parentNode !== p) p.appendChild(el);
      }
      if ('name' in o) e.name = o.name;
      if ('value' in o) e.value = o.value;
      if (e.role === 'figure' && ('name' in o || 'value' in o)) {
        el.firstChild.textContent = (e.name || '') + (e.value ? ': ' + e.value : '');
      } else if (e.role === 'table' && ('name' in o || 'value' in o)) {
        // The data as tab-separated lines, the header first: rebuilt only when it changed.
        const lines = (e.value || '').split('\n');
        el.replaceChildren();
        const caption = document.createElement('caption');
        caption.textContent = e.name || '';
        // The table is named by its caption, which is then hidden from the tree: Orca read it twice, as the
        // table's name and again as the caption's text (as with a figure's caption above).
        caption.id = 'a11y-tcap' + o.id;
        caption.setAttribute('aria-hidden', 'true');
        el.setAttribute('aria-labelledby', caption.id);
        el.appendChild(caption);
        const head = document.createElement('thead'), body = document.createElement('tbody');
        lines.forEach((line, i) => {
          const tr = document.createElement('tr');
          line.split('\t').forEach((text, k) => {
            const c = document.createElement(i === 0 || k === 0 ? 'th' : 'td');  // a row's x names it
            if (i === 0 || k === 0) c.scope = i === 0 ? 'col' : 'row';
            c.textContent = text;
            tr.appendChild(c);
          });
          (i === 0 ? head : body).appendChild(tr);
        });
        el.append(head, body);
      } else if ('name' in o) {
        if (e.role === 'region') el.firstChild.textContent = o.name;
        else if (e.role === 'text') el.textContent = o.name;
        else if (e.role === 'live' || e.role === 'status') attr(el, 'aria-label', o.name);
        else if (e.role === 'tablist' || e.role === 'listbox') attr(el, 'aria-label', o.name || null);
        else {
          attr(el, 'aria-label', o.name);
          if (el.tagName === 'BUTTON') el.textContent = o.name;
        }
      }
      if ('main' in o && e.role === 'region') {
        if (o.main) el.id = 'a11y-main', el.tabIndex = -1;
        else el.id = 'a11y-' + o.id;
      }
      if ('value' in o) {
        if (e.role === 'live' || e.role === 'status') el.textContent = o.value;
        else if (e.role === 'slider') attr(el, 'aria-valuetext', o.value || null);
        else if (e.role === 'text') attr(el, 'aria-description', o.value || null);
        else if (e.role === 'combo') attr(el, 'aria-description', o.value || null);
      }
      if ('range' in o && e.role === 'slider') {
        const [now, lo, hi] = o.range;
        attr(el, 'aria-valuemin', lo);
        attr(el, 'aria-valuemax', hi);
        attr(el, 'aria-valuenow', now);
        const whole = Number.isInteger(lo) && Number.isInteger(hi) && Number.isInteger(now);
        el.dataset.step = whole ? 1 : (hi - lo) / 100;
      } else if ('range' in o && e.role === 'field') {
        const [now, lo, hi] = o.range;
        if (lo < hi) attr(el, 'min', lo), attr(el, 'max', hi);
        if (document.activeElement !== el) el.value = String(now);
      }
      if ('checked' in o) {
        if (e.role === 'nav') attr(el, 'aria-current', o.checked === 1 ? 'page' : null);
        else if (e.role === 'tab') attr(el, 'aria-selected', o.checked === 1 ? 'true' : 'false');
        else if (e.role === 'checkbox' || e.role === 'radio') attr(el, 'aria-checked', o.checked === 1 ? 'true' : 'false');
      }
      if ('expanded' in o && (e.role === 'disclosure' || e.role === 'combo'))
        attr(el, 'aria-expanded', o.expanded === 1 ? 'true' : 'false');
      if ('controls' in o && e.role === 'combo') attr(el, 'aria-controls', o.controls ? 'a11y-' + o.controls : null);
      if ('box' in o && el.classList.contains('n')) {
        const [x, y, w, h] = o.box;
        el.style.left = x + '%';
        el.style.top = y + '%';
        el.style.width = w + '%';
        el.style.height = h + '%';
      }
    }
    // Once, when the chapter's content is first in the mirror: said as a status message. A screen reader reads
    // the page when it has loaded, before the app has drawn anything; Orca then said only "canvas" and
    // nothing of the chapter until a key was pressed.
    const main = !Module.a11yReady && document.getElementById('a11y-main');
    if (main && main.firstChild && main.firstChild.textContent) {
      Module.a11yReady = true;
      const ready = document.createElement('div');
      ready.className = 'live';
      ready.id = 'a11y-ready';
      ready.setAttribute('role', 'status');
      root.appendChild(ready);
      const chapter = main.firstChild.textContent;
      setTimeout(() => { ready.textContent = `Megacluster Explorer is ready: ${chapter}. Tab moves through its controls.`; }, 300);
    }
  },

  js_reduced_motion: function () {
    return window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 1 : 0;
  },

  js_fatal: function (msg) {
    if (window.mcShowError) window.mcShowError(UTF8ToString(msg));
  },

  js_window_width: function () {
    return window.innerWidth;
  },

  js_window_height: function () {
    return window.innerHeight;
  },
});

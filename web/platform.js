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

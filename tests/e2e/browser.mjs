// The one way the browser tests and the frame-rate benchmark start Chromium: Debian's /usr/bin/chromium (or
// $CHROMIUM) headless through playwright-core, WebGL2 on SwiftShader (software rendering: no GPU here), and
// no background traffic (this machine's network is closed). playwright gives every launch a fresh, empty
// profile (and refuses --user-data-dir in args).
import { chromium } from "playwright-core";

export const quietArgs = ["--no-sandbox", "--no-first-run", "--disable-background-networking",
                          "--disable-component-update", "--disable-sync", "--disable-quic"];
export const swiftshaderArgs = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-gpu-sandbox"];

// extraArgs: more Chromium flags; webgl: false starts it with quietArgs only (no SwiftShader flags).
export function launchChromium({ extraArgs = [], webgl = true } = {}) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [...quietArgs, ...(webgl ? swiftshaderArgs : []), ...extraArgs],
  });
}

#!/usr/bin/env python3
"""test_svg_browser.py FLAMEGRAPH_BIN CHROMIUM — the SVG's own script in a real browser
(headless Chromium, --dump-dom): click-to-zoom geometry (zoomed frame full width, its
children scaled, ancestors dimmed, other frames hidden), reset, regex search and the matched
percentage, in flame and icicle layouts. A probe script is appended to the SVG; it writes its
observations into the DOM, which Chromium prints."""
import os
import re
import subprocess
import sys
import tempfile

BIN, CHROMIUM = sys.argv[1], sys.argv[2]
PROBE = """<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () {
  var out = [];
  var all = function (n) { return fg.frames.filter(function (f) { return f.name === n; }); };
  var one = function (n) { return all(n)[0]; };
  zoom(one("a"));
  out.push("a=" + one("a").rect.getAttribute("width"));
  out.push("x=" + all("x").map(function (f) {
    return f.g.getAttribute("class") + "/" + f.rect.getAttribute("width"); }).join(","));
  out.push("main=" + one("main").g.getAttribute("class"));
  out.push("c=" + one("c").g.getAttribute("class"));
  out.push("unzoom=" + fg.unzoom.getAttribute("class"));
  unzoom();
  out.push("reset=" + one("c").g.getAttribute("class") + "/" + one("c").rect.getAttribute("width"));
  runSearch(/^x$/, "x");
  out.push(fg.matched.textContent);
  runSearch(/^(a|x)$/, "^(a|x)$");
  out.push(fg.matched.textContent);
  var t = document.createElementNS("http://www.w3.org/2000/svg", "text");
  t.setAttribute("id", "probe");
  t.textContent = "RES" + "ULT " + out.join(" ");
  document.documentElement.appendChild(t);
});
]]></script>
</svg>
"""
EXPECT = ("RESULT a=1180.00 x=null/885.00,hide/472 main=parent c=hide unzoom=null "
          "reset=null/236.00 Matched: 70.0% Matched: 80.0%")

tmp = tempfile.mkdtemp(prefix="fgsvg")
failures = 0
for extra in ([], ["--inverted"]):
    svg = subprocess.run([BIN] + extra, input=b"main;a;x 30\nmain;a;y 10\nmain;b;x 40\nmain;c 20\n",
                         capture_output=True, check=True).stdout.decode()
    path = os.path.join(tmp, "probe.svg")
    with open(path, "w") as f:
        f.write(svg.replace("</svg>\n", PROBE))
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                          "--dump-dom", "file://" + path],
                         capture_output=True, timeout=90).stdout.decode()
    m = re.search(r"RESULT [^<]*", dom)
    got = m.group(0).strip() if m else "(no result: %r)" % dom[-300:]
    ok = got == EXPECT
    print(("ok  " if ok else "FAIL"), extra, got)
    failures += not ok
sys.exit(1 if failures else 0)

#!/usr/bin/env python3
"""test_svg_browser.py FLAMEGRAPH_BIN CHROMIUM — the SVG's own script in a real browser
(headless Chromium, --dump-dom): click-to-zoom geometry (zoomed frame full width, its
children scaled, ancestors dimmed, other frames hidden), reset, regex search and the matched
percentage, in flame and icicle layouts; with --colors java, the legend: one key per kind
drawn, above the frames, and every frame's colour is nearest to its own kind's key. A probe
script is appended to the SVG; it writes its observations into the DOM, which Chromium
prints."""
import atexit
import html as htmllib
import json
import os
import re
import shutil
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
atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # nothing left in /tmp
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

# The java palette's legend, as drawn: the keys of the kinds present, and each frame's fill
# nearest to the swatch of its own kind (so no two kinds can be mistaken for each other).
KINDS = {  # frame -> legend key
    "[main tid=1]": "thread", "java/lang/Thread.run_[0]": "interpreted", "a/App.loop_[j]": "jit",
    "a/App.step_[i]": "inlined", "java/lang/Object.clone": "jit", "JVM_Clone": "native",
    "ObjectSynchronizer::enter": "cpp", "do_syscall_64_[k]": "kernel", "[GC active]": "pseudo",
}
LEGEND_PROBE = """<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () {
  var fill = function (e) { return getComputedStyle(e).fill; };
  var box = function (e) { var b = e.getBBox(); return [b.x, b.y, b.width, b.height]; };
  var keys = Array.prototype.map.call(document.querySelectorAll("#legend g.key"), function (k) {
    var r = k.getElementsByTagName("rect")[0];
    return { kind: k.getAttribute("data-kind"), label: k.getElementsByTagName("text")[0].textContent,
             fill: fill(r), box: box(k) };
  });
  var frames = fg.frames.map(function (f) { return { name: f.name, fill: fill(f.rect), y: f.y }; });
  var t = document.createElementNS("http://www.w3.org/2000/svg", "text");
  t.setAttribute("id", "probe");
  t.textContent = "RES" + "ULT " + JSON.stringify({ keys: keys, frames: frames });
  document.documentElement.appendChild(t);
});
]]></script>
</svg>
"""
stacks = ("[main tid=1];java/lang/Thread.run_[0];a/App.loop_[j];a/App.step_[i] 40\n"
          "[main tid=1];java/lang/Thread.run_[0];a/App.loop_[j];java/lang/Object.clone;JVM_Clone;"
          "ObjectSynchronizer::enter;do_syscall_64_[k] 30\n"
          "[main tid=1];[GC active] 30\n")
svg = subprocess.run([BIN, "--colors", "java"], input=stacks.encode(), capture_output=True,
                     check=True).stdout.decode()
path = os.path.join(tmp, "legend.svg")
with open(path, "w") as f:
    f.write(svg.replace("</svg>\n", LEGEND_PROBE))
dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                      "--user-data-dir=" + os.path.join(tmp, "chromium"), "file://" + path],
                     capture_output=True, timeout=90).stdout.decode()
m = re.search(r"RESULT ([^<]*)", dom)
problems = []
if not m:
    problems.append("no result: %r" % dom[-300:])
else:
    got = json.loads(htmllib.unescape(m.group(1)))
    rgb = lambda s: [int(v) for v in re.findall(r"\d+", s)[:3]]
    keys = {k["kind"]: rgb(k["fill"]) for k in got["keys"]}
    want = ["jit", "inlined", "interpreted", "cpp", "native", "kernel", "pseudo", "thread"]
    if [k["kind"] for k in got["keys"]] != want:
        problems.append("legend keys %r, want %r" % ([k["kind"] for k in got["keys"]], want))
    top = min(f["y"] for f in got["frames"])
    for k in got["keys"]:
        x, y, w, h = k["box"]
        if not (w > 20 and h > 8 and x >= 0 and x + w <= 1200 and y >= 0 and y + h <= top):
            problems.append("legend key %s not shown above the frames: %r" % (k["kind"], k["box"]))
    for fr in got["frames"]:
        if fr["name"] == "all":
            continue
        c = rgb(fr["fill"])
        near = min(keys, key=lambda k: sum((a - b) ** 2 for a, b in zip(keys[k], c)))
        if near != KINDS.get(fr["name"]):
            problems.append("%s: fill %r is nearest to %s, want %s" % (fr["name"], c, near,
                                                                       KINDS.get(fr["name"])))
    if len(got["frames"]) != len(KINDS) + 1:
        problems.append("frames drawn: %d" % len(got["frames"]))
print(("ok  " if not problems else "FAIL"), "java legend:", "; ".join(problems) or
      "%d keys, every frame nearest its own kind" % len(want))
failures += bool(problems)
sys.exit(1 if failures else 0)

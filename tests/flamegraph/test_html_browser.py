#!/usr/bin/env python3
"""test_html_browser.py FLAMEGRAPH_BIN CHROMIUM — the HTML page (and the SVG) of a known
profile in a real browser, headless Chromium:
  - both load without console errors (Chromium's console log on stderr),
  - a screenshot of the page is taken (and is not blank),
  - searching a known frame reports the right matched percentage,
  - clicking a frame zooms: the frame then spans the full width,
  - the function table lists the hottest function first with the right self count,
  - the search and the zoom are kept in the URL: reopening the link restores them,
  - user-given text (--countname, --title, --subtitle) is shown as text, never run as markup.
A probe script appended to the page drives it through real DOM events and writes what it saw
into the DOM, which Chromium prints (--dump-dom)."""
import atexit
import html as htmllib
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN, CHROMIUM = sys.argv[1], sys.argv[2]
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
PROFILE = "main;a;hot 60\nmain;a;cool 10\nmain;b;hot 20\nmain;b;x 10\n"  # hot: 80%, self 80

PROBE = r"""<script>
window.addEventListener("load", function () {
  var out = [];
  function click(el, x, y) {
    var r = el.getBoundingClientRect();
    el.dispatchEvent(new MouseEvent("click", {bubbles: true, clientX: r.left + x, clientY: r.top + y}));
  }
  var box = document.getElementById("search");
  box.value = "^hot$";
  box.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape"}));  /* clears */
  box.value = "^hot$";
  box.dispatchEvent(new Event("input"));
  setTimeout(function () {
    out.push("matched=" + document.getElementById("matched").textContent);
    var cv = document.getElementById("cv");
    /* find frame "a" among the drawn frames and click its middle */
    var target = -1;
    for (var k = 0; k < 64; k++) { var fr = fgView.frameRect(k); if (fr && FG_DATA.names[FG_DATA.nodes[k * FG_DATA.stride]] === "a") { target = k; break; } }
    var fr = fgView.frameRect(target);
    click(cv, fr.x + fr.w / 2, fr.y + 5);
    var after = fgView.frameRect(target);
    out.push("zoomed=" + (Math.abs(after.w - fgView.canvasWidth()) < 1 ? "full" : after.w + "/" + fgView.canvasWidth()));
    out.push("state=" + JSON.stringify(fgView.state()));
    out.push("hash=" + location.hash);
    var row = document.querySelector("#ftable tbody tr[data-name]");
    out.push("first=" + row.dataset.name + "/" + row.dataset.self);
    var p = document.createElement("pre"); p.id = "probe"; p.textContent = "RES" + "ULT " + out.join(" ");
    document.body.appendChild(p);
  }, 400);
});
</script>
</body>"""

EXPECT = ('RESULT matched=Matched: 80.0% (80 samples) zoomed=full '
          'state={"zoom":2,"search":"^hot$","reverse":false,"icicle":false} hash=#s=%5Ehot%24&z=2 first=hot/80')

RELOAD = r"""<script>
window.addEventListener("load", function () {
  var p = document.createElement("pre"); p.id = "probe";
  p.textContent = "RES" + "ULT " + JSON.stringify(fgView.state()) + " " + document.getElementById("matched").textContent;
  document.body.appendChild(p);
});
</script>
</body>"""


def chrome(url, *extra):
    with tempfile.TemporaryDirectory(prefix="fgchr") as profile:
        p = subprocess.run([CHROMIUM, *FLAGS, "--user-data-dir=" + profile, *extra, url],
                           capture_output=True, timeout=120)
    return p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def console_errors(log):
    return [l for l in log.splitlines() if "CONSOLE" in l and ("Uncaught" in l or "Error" in l)]


tmp = tempfile.mkdtemp(prefix="fghtml")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # nothing left in /tmp
src = os.path.join(tmp, "known.folded")
with open(src, "w") as f:
    f.write(PROFILE)
html, svg = os.path.join(tmp, "known.html"), os.path.join(tmp, "known.svg")
subprocess.run([BIN, src, "-o", html, "--title", "known"], check=True)
subprocess.run([BIN, src, "-o", svg], check=True)
failures = []

page = open(html, encoding="utf-8").read()
probe = os.path.join(tmp, "probe.html")
with open(probe, "w", encoding="utf-8") as f:
    f.write(page.replace("</body>", PROBE))
dom, log = chrome("file://" + probe, "--dump-dom", "--virtual-time-budget=5000")
m = re.search(r"RESULT [^<]*", dom)
got = htmllib.unescape(m.group(0).strip()) if m else "(no result) " + log[-800:]
print("html:", got)
if got != EXPECT:
    failures.append(f"html: got {got!r}, want {EXPECT!r}")
errs = console_errors(log)
if errs:
    failures.append("html console errors: " + "; ".join(errs))

again = os.path.join(tmp, "again.html")
with open(again, "w", encoding="utf-8") as f:
    f.write(page.replace("</body>", RELOAD))
dom, log = chrome("file://" + again + "#s=%5Ehot%24&z=2&i=1", "--dump-dom")
m = re.search(r"RESULT [^<]*", dom)
got = m.group(0).strip() if m else "(no result)"
want = 'RESULT {"zoom":2,"search":"^hot$","reverse":false,"icicle":true} Matched: 80.0% (80 samples)'
print("link:", got)
if got != want:
    failures.append(f"reopened link: got {got!r}, want {want!r}")

shot = os.path.join(tmp, "known.png")
chrome("file://" + html, "--screenshot=" + shot, "--window-size=1200,800")
size = os.path.getsize(shot) if os.path.exists(shot) else 0
print("screenshot:", shot, size, "bytes")
if size < 10000:
    failures.append(f"screenshot missing or blank ({size} bytes)")

dom, log = chrome("file://" + svg, "--dump-dom")
errs = console_errors(log)
print("svg:", "loads" if "<svg" in dom else "did not load", "; console errors:", errs or "none")
if "<svg" not in dom or errs:
    failures.append("svg: " + ("; ".join(errs) or "not loaded"))

# a differential page: loads without errors and, with widths from the larger side, draws the
# frame that only the new profile has and the one that only the base has
base, new, diff = (os.path.join(tmp, n) for n in ("base.folded", "new.folded", "diff.html"))
open(base, "w").write("main;a;hot 60\nmain;a;cool 10\nmain;b;x 30\n")
open(new, "w").write("main;a;hot 90\nmain;b;x 10\nmain;c;fresh 20\n")
subprocess.run([BIN, base, new, "-o", diff], check=True)
page = open(diff, encoding="utf-8").read().replace("</body>", RELOAD.replace(
    'JSON.stringify(fgView.state()) + " " + document.getElementById("matched").textContent',
    '[fgView.search("^fresh$"), fgView.search("^cool$"), fgView.drawn()].join(" ")'))
with open(diff, "w", encoding="utf-8") as f:
    f.write(page)
dom, log = chrome("file://" + diff + "#w=2", "--dump-dom")
m = re.search(r"RESULT [^<]*", dom)
got = htmllib.unescape(m.group(0).strip()) if m else "(no result)"
print("diff:", got)  # larger widths: all = 90+10 + 30 + 20 = 150; fresh 20/150, cool 10/150; 9 frames
if got != "RESULT 13.33 6.67 9" or console_errors(log):
    failures.append(f"diff: got {got!r}; console: {console_errors(log)}")

# user-given text is text: a count name, title and subtitle that are an <img> tag with an
# onerror handler show as those characters (the details line, filled by a click on a frame,
# is built as HTML) and create no element
HOSTILE = '<img src=x onerror="window.fgPwned=1">'
evil = os.path.join(tmp, "evil.html")
subprocess.run([BIN, src, "-o", evil, "--countname", HOSTILE, "--title", HOSTILE, "--subtitle", HOSTILE],
               check=True)
page = open(evil, encoding="utf-8").read().replace("</body>", r"""<script>
window.addEventListener("load", function () {
  var cv = document.getElementById("cv"), fr = fgView.frameRect(1), r = cv.getBoundingClientRect();
  cv.dispatchEvent(new MouseEvent("click", {bubbles: true, clientX: r.left + fr.x + fr.w / 2, clientY: r.top + fr.y + 5}));
  setTimeout(function () {
    var p = document.createElement("pre"); p.id = "probe";
    p.textContent = "RES" + "ULT imgs=" + document.querySelectorAll("img").length + " pwned=" + !!window.fgPwned +
      " shown=" + (document.getElementById("details").textContent.indexOf("<img src=x") >= 0);
    document.body.appendChild(p);
  }, 300);
});
</script>
</body>""")
with open(evil, "w", encoding="utf-8") as f:
    f.write(page)
dom, log = chrome("file://" + evil, "--dump-dom", "--virtual-time-budget=5000")
m = re.search(r"RESULT [^<]*", dom)
got = m.group(0).strip() if m else "(no result) " + log[-800:]
print("escaping:", got)
if got != "RESULT imgs=0 pwned=false shown=true":
    failures.append(f"escaping: got {got!r}, want 'RESULT imgs=0 pwned=false shown=true'")

for f in failures:
    print("FAIL", f)
checks = ("html", "html console", "reopened link", "screenshot", "svg", "diff", "escaping")
failed = sum(any(f.startswith(c + ":") or f.startswith(c + " ") for f in failures) for c in checks)
print(f"browser: {len(checks) - failed} passed, {failed} failed")
sys.exit(1 if failures else 0)

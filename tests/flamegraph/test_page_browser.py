#!/usr/bin/env python3
"""test_page_browser.py FLAMEGRAPH_BIN CHROMIUM — what a newcomer meets first on the HTML page,
in headless Chromium; each check builds a page from a small folded profile whose right answer
is known, appends a probe script that drives it (real DOM events where there are some) and
writes what it saw as JSON into the DOM, which Chromium prints (--dump-dom):
  methods  one table row per method whatever its kinds (_[j] _[i] _[0]), its total counting a
           stack once even when the method is in it twice, its self, and the split by kind,
  height   a very deep but very thin stack (too narrow to draw) leaves no empty band: the
           canvas is as tall as the frames drawn need, and grows when a zoom makes it drawable,
  legend   one key per kind present, in order, and every drawn frame's pixels nearest in
           colour to its own kind's key,
  threads  choosing a thread in the selector narrows the total, the table, the frames and the
           search to its samples; "all" restores them; the choice is kept in the link,
  numbers  counts with thousands separators and percentages with one decimal everywhere
           (subtitle, matched, table, details),
  heatmap  a time axis (put in the page as the agent writes one): the heat map drawn, a drag
           across it narrows the graph and the table to the range, shift+drag a second range
           shows the differential, "Whole run" restores, the chosen thread narrows the heat
           map, the link keeps the ranges and reopens them, marks (GC pauses, a kill -3)
           counted above the map and named in their boxes' tooltips; a page without one shows
           none; its pixels with two ranges: the boxes in them in their colour with a bar (the
           first's colour, the second's), the others faded, the gaps the background."""
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
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--window-size=1200,900"]
TMP = tempfile.mkdtemp(prefix="fgpage")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)  # nothing left in /tmp
failures = []

# Helpers for the probes: the table's rows, the frames drawn, a canvas pixel.
HELPERS = r"""
function rows() {
  return Array.prototype.map.call(document.querySelectorAll("#ftable tbody tr[data-name]"), function (tr) {
    return { name: tr.dataset.name, self: +tr.dataset.self, total: +tr.dataset.total, kinds: tr.dataset.kinds,
             cells: Array.prototype.map.call(tr.cells, function (td) { return td.textContent; }) };
  });
}
function pixel(x, y) {
  var cv = document.getElementById("cv"), d = window.devicePixelRatio || 1;
  var p = cv.getContext("2d").getImageData(Math.floor(x * d), Math.floor(y * d), 1, 1).data;
  return [p[0], p[1], p[2]];
}
function clickFrame(name) {
  var f = fgView.frames().filter(function (f) { return f.name === name; })[0];
  var cv = document.getElementById("cv"), r = cv.getBoundingClientRect();
  cv.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: r.left + f.x + f.w / 2, clientY: r.top + f.y + 5 }));
}
"""


def chrome(url):
    with tempfile.TemporaryDirectory(prefix="fgchr") as profile:
        p = subprocess.run([CHROMIUM, *FLAGS, "--user-data-dir=" + profile, "--dump-dom", url],
                           capture_output=True, timeout=120)
    return p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def with_time(text, time):
    """The page `text` with a time axis as the agent writes one (the tool reads no times):
    time = (startMs, cellNs, ncells, [[tid, name], ...], [(cell, "frame;frame", thread, weight)]),
    each entry's stack named by its frames and found among the page's nodes."""
    at = text.index("const FG_DATA = ") + len("const FG_DATA = ")
    d, _ = json.JSONDecoder().raw_decode(text, at)
    path, index = [], {}
    for i in range(0, len(d["nodes"]), d["stride"]):
        name, depth = d["nodes"][i], d["nodes"][i + 1]
        del path[max(depth - 1, 0):]
        if depth:
            path.append(d["names"][name])
        index[";".join(path)] = i // d["stride"]
    start, cell_ns, ncells, threads, entries = time[:5]
    marks = time[5] if len(time) > 5 else []
    stacks, flat = [], []
    for cell, stack, thread, weight in entries:
        if index[stack] not in stacks:
            stacks.append(index[stack])
        flat += [cell, stacks.index(index[stack]), thread, weight]
    member = json.dumps({"startMs": start, "durationNs": cell_ns * ncells, "cellNs": cell_ns, "merged": 1,
                         "threads": threads, "marks": marks, "marksLost": 0, "stacks": stacks,
                         "entries": flat})
    return text.replace(',\n"palette":{', ',\n"time":' + member + ',\n"palette":{', 1)


def probe(name, folded, body, args=(), hash="", time=None, page_of=None):
    """The page of `folded` (with a time axis: with_time) with the probe `body` (JS returning a
    JSON-able value) run at load; returns that value, or None (and a failure) when the page
    broke."""
    src = os.path.join(TMP, name + ".folded")
    with open(src, "w") as f:
        f.write(folded)
    page = os.path.join(TMP, name + ".html")
    subprocess.run([BIN, src, "-o", page, *args], check=True)
    text = open(page, encoding="utf-8").read()
    if time:
        text = with_time(text, time)
    if page_of:
        text = page_of(text)
    script = ("<script>\n" + HELPERS + "window.addEventListener('load', function () {\n"
              "  var out; try { out = (function () {\n" + body + "\n})(); } catch (e) { out = 'ERROR ' + e; }\n"
              "  var p = document.createElement('pre'); p.id = 'probe';\n"
              "  p.textContent = 'RES' + 'ULT ' + JSON.stringify(out); document.body.appendChild(p);\n"
              "});\n</script>\n</body>")
    with open(page, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", script))
    dom, log = chrome("file://" + page + hash)
    errs = [l for l in log.splitlines() if "CONSOLE" in l and ("Uncaught" in l or "Error" in l)]
    m = re.search(r"RESULT ([^<]*)", dom)
    if not m or errs:
        failures.append(f"{name}: page broke: {errs or dom[-300:]}")
        return None
    got = json.loads(htmllib.unescape(m.group(1)))
    if isinstance(got, str) and got.startswith("ERROR"):
        failures.append(f"{name}: probe: {got}")
        return None
    return got


def expect(name, what, got, want):
    ok = got == want
    print(("ok  " if ok else "FAIL"), name, what, repr(got) if ok else f"got {got!r}, want {want!r}")
    if not ok:
        failures.append(f"{name}: {what}: got {got!r}, want {want!r}")


# --- methods: one row per method ----------------------------------------------------------
# M runs JIT-compiled, inlined and interpreted, and twice in two stacks (JIT outside, inlined
# inside). Total 100; M: 10 + 20 + 5 + 7 + 3 = 45 (each stack once), self 20 + 5 + 7 = 32;
# by the kind nearest the sample: JIT 10, inlined 20 + 7 + 3 = 30, interpreted 5.
M = "com/x/M.run"
got = probe("methods", f"main;{M}_[j];x 10\nmain;{M}_[i] 20\nmain;a;{M}_[0] 5\n"
                       f"main;{M}_[j];b;{M}_[i] 7\nmain;{M}_[j];c;{M}_[i];d 3\nmain;other 55\n", r"""
  var before = rows();
  var tr = document.querySelector('#ftable tbody tr[data-name="com/x/M.run"]');
  tr.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  return { rows: before, matched: document.getElementById("matched").textContent,
           callers: document.querySelector("#rtable tbody").textContent };
""")
if got:
    ms = [r for r in got["rows"] if r["name"].startswith(M)]
    expect("methods", "rows of M", [r["name"] for r in ms], [M])
    if ms:
        r = ms[0]
        expect("methods", "M total/self", (r["total"], r["self"]), (45, 32))
        expect("methods", "M by kind", r["kinds"], "jit:10,inlined:30,interpreted:5")
        expect("methods", "M cells", r["cells"][1:], ["32", "32.0%", "45", "45.0%"])
    expect("methods", "rows", sorted(r["name"] for r in got["rows"]),
           sorted([M, "main", "x", "a", "b", "c", "d", "other"]))
    expect("methods", "clicking the row searches every kind", got["matched"], "Matched: 45.0% (45 samples)")

# --- height: no empty band above the flames -----------------------------------------------
# 99,995 samples three frames deep and 5 samples 300 frames deep: at ~1,170 px the deep stack
# is 0.06 px wide, not drawn; the canvas needs 4 rows (all, main, a, b): 4 * 17 + 4 = 72 px.
deep = ";".join("d%d" % i for i in range(300))
got = probe("height", f"main;a;b 99995\nmain;{deep} 5\n", r"""
  var out = {}, fh = fgView.frameHeight;
  function look(tag) {
    var fr = fgView.frames(), deepest = Math.max.apply(null, fr.map(function (f) { return f.depth; }));
    var top = Math.min.apply(null, fr.map(function (f) { return f.y; }));
    out[tag] = { height: fgView.canvasHeight(), need: (deepest + 1) * fh + 4, deepest: deepest, top: top };
  }
  look("flame");
  document.getElementById("icicle").click(); look("icicle"); document.getElementById("icicle").click();
  fgView.zoomTo("d0"); look("zoomed");
  document.getElementById("reset").click(); look("reset");
  return out;
""", args=["--html-prune", "0"])
if got:
    for tag, deepest in (("flame", 3), ("icicle", 3), ("zoomed", 301), ("reset", 3)):
        g = got[tag]
        expect("height", tag + ": canvas height = rows drawn", (g["height"], g["deepest"]),
               ((deepest + 1) * 17 + 4, deepest))
        expect("height", tag + ": topmost frame at the top", g["top"], 2)

# --- legend: the colour of every kind ----------------------------------------------------
KINDS = {  # frame -> legend key
    "[main tid=1]": "thread", "java/lang/Thread.run_[0]": "interpreted", "a/App.loop_[j]": "jit",
    "a/App.step_[i]": "inlined", "java/lang/Object.clone": "jit", "JVM_Clone": "native",
    "ObjectSynchronizer::enter": "cpp", "do_syscall_64_[k]": "kernel", "[GC active]": "pseudo",
}
got = probe("legend", "[main tid=1];java/lang/Thread.run_[0];a/App.loop_[j];a/App.step_[i] 40\n"
                      "[main tid=1];java/lang/Thread.run_[0];a/App.loop_[j];java/lang/Object.clone;"
                      "JVM_Clone;ObjectSynchronizer::enter;do_syscall_64_[k] 30\n"
                      "[main tid=1];[GC active] 30\n", r"""
  var keys = Array.prototype.map.call(document.querySelectorAll("#legend .key"), function (k) {
    var b = k.getBoundingClientRect();
    return { kind: k.dataset.kind, label: k.textContent, colour: getComputedStyle(k.querySelector("i")).backgroundColor,
             shown: b.width > 20 && b.height > 8 };
  });
  var frames = fgView.frames().map(function (f) { return { name: f.name, w: f.w, pixel: pixel(f.x + 1, f.y + 1) }; });
  return { keys: keys, frames: frames };
""")
if got:
    want = ["jit", "inlined", "interpreted", "cpp", "native", "kernel", "pseudo", "thread"]
    expect("legend", "keys", [k["kind"] for k in got["keys"]], want)
    expect("legend", "labels", [k["label"] for k in got["keys"]],
           ["Java (JIT)", "inlined", "interpreted", "C++ (JVM)", "native (C)", "kernel", "pseudo-frame", "thread"])
    expect("legend", "keys visible", all(k["shown"] for k in got["keys"]), True)
    rgb = lambda s: [int(v) for v in re.findall(r"\d+", s)[:3]]
    keys = {k["kind"]: rgb(k["colour"]) for k in got["keys"]}
    nearest = {}
    for fr in got["frames"]:
        if fr["name"] != "all":
            nearest[fr["name"]] = min(keys, key=lambda k: sum((a - b) ** 2 for a, b in zip(keys[k], fr["pixel"])))
    expect("legend", "each frame nearest its kind's key", nearest, KINDS)

# --- threads: the selector narrows everything to one thread -----------------------------
THREADS = ("[main tid=1];a/Main.main_[0];a/Main.work_[j] 30\n"
           "[worker-1 tid=2];a/W.run_[j];a/Main.work_[j] 50\n"
           "[worker-1 tid=2];a/W.idle_[j] 10\n"
           "[GC Thread#0 tid=3];G1::work 10\n")
SELECT = r"""
  var sel = document.getElementById("thread"), out = {};
  function look(tag) {
    /* the table rebuilt may bring or take the page's scroll bar: the graph is drawn again for
       its new width when the ResizeObserver reports it, a frame later; a resize now does the
       same at once, so the widths below compare what the settled page shows */
    window.dispatchEvent(new Event("resize"));
    var work = rows().filter(function (r) { return r.name === "a/Main.work"; })[0];
    out[tag] = { total: fgView.total(), scope: document.getElementById("scope").textContent,
                 rows: rows().map(function (r) { return r.name; }).sort(),
                 work: work ? work.cells.slice(1) : null,
                 frames: fgView.frames().map(function (f) { return f.name; }).sort(),
                 rootWidth: Math.round(fgView.frames()[0].w) === Math.round(fgView.canvasWidth()),
                 link: new URLSearchParams(location.hash.slice(1)).get("t") };
    out[tag].matched = (fgView.search("Main\\.work"), document.getElementById("matched").textContent);
    fgView.search("");
  }
"""
got = probe("threads", THREADS, SELECT + r"""
  out.hidden = sel.hidden;
  out.options = Array.prototype.map.call(sel.options, function (o) { return o.textContent; });
  look("all");
  sel.value = "[worker-1 tid=2]"; sel.dispatchEvent(new Event("change"));
  look("worker");
  sel.value = ""; sel.dispatchEvent(new Event("change"));
  look("again");
  return out;
""")
if got:
    expect("threads", "selector shown", got["hidden"], False)
    expect("threads", "options", got["options"],
           ["All threads (3)", "worker-1 (tid 2) · 60.0%", "main (tid 1) · 30.0%", "GC Thread#0 (tid 3) · 10.0%"])
    w = got["worker"]
    expect("threads", "worker-1: total", w["total"], 60)
    expect("threads", "worker-1: scope", w["scope"], "Thread worker-1 tid=2: 60 of 100 samples (60.0%)")
    expect("threads", "worker-1: table", w["rows"], ["[worker-1 tid=2]", "a/Main.work", "a/W.idle", "a/W.run"])
    expect("threads", "worker-1: a/Main.work", w["work"], ["50", "83.3%", "50", "83.3%"])
    expect("threads", "worker-1: frames", w["frames"],
           sorted(["all", "[worker-1 tid=2]", "a/W.run_[j]", "a/Main.work_[j]", "a/W.idle_[j]"]))
    expect("threads", "worker-1: root full width", w["rootWidth"], True)
    expect("threads", "worker-1: search", w["matched"], "Matched: 83.3% (50 samples)")
    expect("threads", "worker-1: link", w["link"], "[worker-1 tid=2]")
    for tag in ("all", "again"):
        a = got[tag]
        expect("threads", tag + ": total", (a["total"], a["scope"], a["work"], a["matched"], a["link"]),
               (100, "", ["80", "80.0%", "80", "80.0%"], "Matched: 80.0% (80 samples)", None))
got = probe("threads-link", THREADS, SELECT + r"""
  out.value = sel.value; look("link"); return out;
""", hash="#t=%5Bmain%20tid%3D1%5D")
if got:
    expect("threads", "reopened link", (got["value"], got["link"]["total"], got["link"]["work"]),
           ("[main tid=1]", 30, ["30", "100.0%", "30", "100.0%"]))

# --- numbers: one format ----------------------------------------------------------------
got = probe("numbers", "main;a 1234\nmain;b 11111\nmain;c 1\n", r"""
  var out = { subtitle: document.getElementById("subtitle").textContent };
  fgView.search("^a$"); out.matched = document.getElementById("matched").textContent; fgView.search("");
  out.rows = rows().map(function (r) { return [r.name].concat(r.cells.slice(1)); });
  clickFrame("b"); out.details = document.getElementById("details").textContent;
  return out;
""", args=["--subtitle", "run 7"])
if got:
    expect("numbers", "subtitle", got["subtitle"], "run 7 · 12,346 samples")
    expect("numbers", "matched", got["matched"], "Matched: 10.0% (1,234 samples)")
    expect("numbers", "table", sorted(got["rows"]),
           [["a", "1,234", "10.0%", "1,234", "10.0%"], ["b", "11,111", "90.0%", "11,111", "90.0%"],
            ["c", "1", "<0.1%", "1", "<0.1%"], ["main", "0", "0.0%", "12,346", "100.0%"]])
    expect("numbers", "details", got["details"], "b · 11,111 samples (90.0%), self 11,111 (90.0%) · kind: native (C)")

# --- heatmap: the time axis, ranges, a differential of two, the link -----------------------
# 10 cells of 20 ms: main runs A in cells 0-4 (12 a cell) and B in cells 5-9 (8 a cell); w runs
# C in every cell (2 a cell). A 60, B 40, C 20: 120.
TIMED = ("[main tid=1];a;A 60\n[main tid=1];a;B 40\n[w tid=2];C 20\n",
         (1700000000000, 20000000, 10, [[1, "main"], [2, "w"]],
          [e for c in range(10) for e in ((c, "[main tid=1];a;" + ("A" if c < 5 else "B"), 0, 12 if c < 5 else 8),
                                           (c, "[w tid=2];C", 1, 2))],
          # marks: a GC pause over cells 1-2, another in cell 9, a kill -3 in cell 8
          [[25000000, 30000000, "GC pause"], [185000000, 2000000, "GC pause"],
           [170000000, 0, "profile written: kill -3"]]))
HEAT = r"""
  var hm = document.getElementById("hm"), out = {};
  function box(k) {  /* the centre of box k, in client coordinates */
    var h = fgView.heat(), b = hm.getBoundingClientRect();
    return { clientX: b.left + Math.floor(k / h.rows) * h.colPx + h.colPx / 2,
             clientY: b.top + (k % h.rows) * h.rowPx + h.rowPx / 2, bubbles: true };
  }
  function drag(a, b, shift) {
    var down = box(a), up = box(b);
    down.shiftKey = up.shiftKey = !!shift;
    hm.dispatchEvent(new MouseEvent("mousedown", down));
    hm.dispatchEvent(new MouseEvent("mousemove", up));
    hm.dispatchEvent(new MouseEvent("mouseup", up));
  }
  function look(tag) {
    out[tag] = { total: fgView.total(), range: fgView.rangeText(), ranges: fgView.ranges(),
                 rows: rows().map(function (r) { return r.name; }).sort(),
                 legend: document.getElementById("legend").textContent,
                 link: location.hash, heat: fgView.heat() };
  }
"""
got = probe("heatmap", TIMED[0], HEAT + r"""
  out.shown = !document.getElementById("timeline").hidden;
  out.info = document.getElementById("tlinfo").textContent;
  hm.dispatchEvent(new MouseEvent("mousemove", box(1)));
  out.tip1 = document.getElementById("tip").textContent;
  hm.dispatchEvent(new MouseEvent("mousemove", box(8)));
  out.tip8 = document.getElementById("tip").textContent;
  hm.dispatchEvent(new MouseEvent("mouseleave", box(8)));
  look("whole");
  drag(0, 4);
  look("first");
  document.getElementById("tlzoom").click();
  look("zoomed");
  document.getElementById("tlout").click();
  look("unzoomed");
  drag(5, 9, true);
  look("diff");
  document.getElementById("tlall").click();
  look("back");
  var sel = document.getElementById("thread");
  sel.value = "[w tid=2]"; sel.dispatchEvent(new Event("change"));
  drag(2, 2);
  look("thread");
  return out;
""", time=TIMED[1])
if got:
    expect("heatmap", "the time axis shown", got["shown"], True)
    expect("heatmap", "the marks counted above the map",
           [m in got["info"] for m in ("GC pauses (2, 32 ms in all)", "A corner: profile written: kill -3 (1)")],
           [True, True])
    expect("heatmap", "a box's tooltip names its marks", ("GC pause, 15 ms" in got["tip1"],
                                                           "profile written: kill -3" in got["tip8"]), (True, True))
    w = got["whole"]
    expect("heatmap", "whole run: heat map", (w["heat"]["rows"], w["heat"]["cols"], w["heat"]["sum"], w["heat"]["max"]),
           (10, 1, 120, 14))
    expect("heatmap", "whole run: total and range", (w["total"], w["range"]), (120, "whole run, 120 samples"))
    f = got["first"]
    expect("heatmap", "drag cells 0-4: total, text", (f["total"], f["range"]), (70, "0 s – 0.1 s, 70 samples"))
    expect("heatmap", "drag cells 0-4: table", f["rows"], ["A", "C", "[main tid=1]", "[w tid=2]", "a"])
    expect("heatmap", "drag cells 0-4: link", f["link"], "#h=0-5")
    z = got["zoomed"]
    expect("heatmap", "zoom to range: cells 0-5 and one more, a box a cell",
           (z["ranges"]["view"], z["heat"]["rows"], z["heat"]["box"], z["heat"]["sum"], z["link"]),
           ([0, 6], 6, 1, 80, "#h=0-5&hv=0-6"))
    expect("heatmap", "zoom out: the whole run", (got["unzoomed"]["ranges"]["view"], got["unzoomed"]["heat"]["sum"]),
           (None, 120))
    d = got["diff"]
    expect("heatmap", "shift+drag cells 5-9: a differential", (d["ranges"]["diff"], d["total"]), (True, 50))
    expect("heatmap", "shift+drag: text", d["range"], "0.1 s – 0.2 s, 50 samples against 0 s – 0.1 s, 70 samples (red: grew)")
    expect("heatmap", "shift+drag: the diff legend", "grew" in d["legend"] and "shrank" in d["legend"], True)
    expect("heatmap", "shift+drag: link", d["link"], "#h=0-5&h2=5-10")
    b = got["back"]
    expect("heatmap", "whole run again", (b["total"], b["ranges"]["diff"], b["link"], "grew" in b["legend"]),
           (120, False, "", False))
    t = got["thread"]
    expect("heatmap", "thread w: heat map, one cell", (t["heat"]["sum"], t["total"], t["range"]),
           (20, 2, "0.04 s – 0.06 s, 2 samples"))
# The heat map's pixels with two ranges (boxes 0-4, then 7-8): a box in a range in its own
# colour with a bar at its left (the accent colour, purple for the second range), the boxes
# outside faded to a quarter of their colour over the background, the gaps the background.
got = probe("heatmap-pixels", TIMED[0], HEAT + r"""
  drag(0, 4);
  drag(7, 8, true);
  var h = fgView.heat(), d = window.devicePixelRatio || 1, x = hm.getContext("2d");
  var css = getComputedStyle(document.documentElement), panel = css.getPropertyValue("--panel");
  function at(px, py) {
    return Array.prototype.slice.call(x.getImageData(Math.floor(px * d), Math.floor(py * d), 1, 1).data, 0, 3);
  }
  function painted(fill, alpha) {  /* fill at alpha over the heat map's background */
    var c = document.createElement("canvas"), y = c.getContext("2d");
    c.width = c.height = 1;
    y.fillStyle = panel; y.fillRect(0, 0, 1, 1);
    y.globalAlpha = alpha; y.fillStyle = fill; y.fillRect(0, 0, 1, 1);
    return Array.prototype.slice.call(y.getImageData(0, 0, 1, 1).data, 0, 3);
  }
  var boxes = [];
  for (var k = 0; k < h.rows * h.cols; k++) {
    var bx = Math.floor(k / h.rows) * h.colPx, by = (k % h.rows) * h.rowPx,
        v = k < 5 ? 14 : 10, colour = fgModel.heatColour(v, h.max);
    boxes.push({ centre: at(bx + h.colPx / 2, by + h.rowPx / 2), bar: at(bx + 1, by + h.rowPx / 2),
                 gap: at(bx + h.colPx / 2, by + h.rowPx - 0.5), full: painted(colour, 1),
                 faded: painted(colour, 0.25) });
  }
  return { boxes: boxes, background: painted(panel, 1), accent: painted(css.getPropertyValue("--accent"), 1),
           purple: painted("#8250df", 1), heat: [h.rows, h.cols, h.max] };
""", time=TIMED[1])
if got:
    near = lambda a, b: all(abs(x - y) <= 2 for x, y in zip(a, b))
    expect("heatmap", "pixels: one column of 10 boxes, the largest 14", got["heat"], [10, 1, 14])
    seen = []
    for k, b in enumerate(got["boxes"]):
        state = "first" if k < 5 else "second" if k in (7, 8) else "faded"
        seen.append((near(b["centre"], b["faded" if state == "faded" else "full"]),
                     near(b["bar"], {"first": got["accent"], "second": got["purple"]}.get(state, b["faded"])),
                     near(b["gap"], got["background"])))
    expect("heatmap", "pixels: colour, bar, gap of each box (in a range, or faded)", seen, [(True,) * 3] * 10)
got = probe("heatmap-link", TIMED[0], HEAT + "look('link'); return out;", time=TIMED[1], hash="#h=0-5&h2=5-10")
if got:
    g = got["link"]
    expect("heatmap", "reopened link: the differential", (g["ranges"]["range"], g["ranges"]["range2"], g["total"]),
           ([0, 5], [5, 10], 50))
got = probe("heatmap-none", "a 1\n", "return { hidden: document.getElementById('timeline').hidden };")
if got:
    expect("heatmap", "no time axis: nothing shown", got["hidden"], True)


# --- several events in one page (the agent's event=cpu,alloc,lock, fg_write_html_events) ------
def with_events(text):
    """The page `text` made a page of two events as the agent writes one: "cpu" its own data,
    "alloc" that of a second profile (EVENT2, in bytes)."""
    src = os.path.join(TMP, "events2.folded")
    with open(src, "w") as f:
        f.write(EVENT2)
    page = os.path.join(TMP, "events2.html")
    subprocess.run([BIN, src, "-o", page, "--countname", "bytes", "--title", "Allocation profile"], check=True)
    def data(t):
        at = t.index("const FG_DATA = ") + len("const FG_DATA = ")
        _, end = json.JSONDecoder().raw_decode(t, at)
        return at, end, t[at:end]
    at, end, cpu = data(text)
    alloc = data(open(page, encoding="utf-8").read())[2]
    line = ('const FG_EVENTS = [{"event":"cpu","data":' + cpu + '},\n{"event":"alloc","data":' + alloc +
            '}];\nconst FG_DATA = FG_EVENTS[Math.max(0, FG_EVENTS.findIndex((x) => x.event === '
            'new URLSearchParams(location.hash.slice(1)).get("e")))].data')
    return text[:at - len("const FG_DATA = ")] + line + text[end:]


EVENT1, EVENT2 = "main;a;hot 60\nmain;b 40\n", "main;alloc;byte[]_[a] 4096\nmain;alloc;long[]_[a] 1024\n"
EVENTS = r"""var s = document.getElementById('event');
return { hidden: s.hidden, value: s.value, options: [].map.call(s.options, function (o) { return o.textContent; }),
         title: document.getElementById('title').textContent, link: location.hash,
         unit: document.querySelector('#ftable th[data-k=self]').textContent, rows: rows().length };"""
for hash, want in (("", ("cpu", "Flame Graph", "Self (samples)", "#e=cpu")),
                   ("#e=alloc", ("alloc", "Allocation profile", "Self (bytes)", "#e=alloc")),
                   ("#e=alloc&r=1", ("alloc", "Allocation profile", "Self (bytes)", "#e=alloc&r=1")),
                   ("#e=nope", ("cpu", "Flame Graph", "Self (samples)", "#e=cpu"))):
    got = probe("events", EVENT1, EVENTS, hash=hash, page_of=with_events)
    if got:
        expect("events", f"{hash or 'no fragment'}: the selector", (got["hidden"], got["options"]),
               (False, ["cpu (samples)", "alloc (bytes)"]))
        expect("events", f"{hash or 'no fragment'}: the event shown, its unit, the link",
               (got["value"], got["title"], got["unit"], got["link"]), want)
got = probe("events-one", EVENT1, EVENTS)
if got:
    expect("events", "one event: no selector", got["hidden"], True)

for f in failures:
    print("FAIL", f)
print(f"page: {len(failures)} failures")
sys.exit(1 if failures else 0)

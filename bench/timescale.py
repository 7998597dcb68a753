#!/usr/bin/env python3
"""timescale.py — the time axis at scale (issue "When did it happen", item 5): a long profile's
time data in the agent, its files, and its page in headless Chromium.

  python3 bench/timescale.py [--minutes 10] [--build build] [--out DIR] [--chromium PATH]
                             [--synthetic-only] [--repeat 3]
  python3 bench/timescale.py --from-page PAGE [--from-page PAGE ...] [--scale K] [--compare REV]
                             [--repeat 7]

1. A run of the busyidle scenario (two busy threads, 50 idle) for --minutes at interval=1ms,
   the agent writing a JFR recording; 5 s before its end the launcher's `dump` writes the
   agent's own HTML page of the profile so far. From the stats: captures, the time axis's
   entries and memory (time_kb: as allocated) — bytes a capture —, whether it coarsened.
   The tool's page from the recording (`flamegraph run.jfr -o tool.html`) too.
2. A synthetic 24-hour profile: the page's time member as flamegraph/fg_time.c writes one for
   24 h of 20 ms cells, one busy thread in one of 200 stacks a cell (4,320,000 entries, merged
   by the writer's rule to at most 1,000,000), put into a page of those stacks.
3. Each page in headless Chromium (--repeat times, medians): `ready` — from navigation start to
   the end of the page's script (the graph, the table and the heat map drawn on their
   canvases) and the page laid out: interactive; `range` — choosing a range on the heat map
   (the graph, the table and the heat map redrawn for it: fgView.selectRange, synchronous,
   and the page's style and layout brought up to date), for a tenth of the run and for a
   single box; `diff` — a second range against the first.

--from-page: no run; the profile data of pages an earlier run wrote (agent.html, tool.html,
synthetic.html in its --out) put into this tree's page code (flamegraph/page/, assembled as the
build does) and, with --compare REV, into REV's page code too: the two loaded in turn, old then
new, --repeat times, so that both see the same host. --scale K makes each page's run K times as
big before timing it: every time entry repeated for K copies of its thread (K times the
entries, the captures and every frame's weight; the same stacks and cells), e.g. the 10-minute
run's 634,098 samples as 1,268,196 with K=2.

Prints one table (medians, and the spread min-max with --from-page); the numbers are this
machine's (2 vCPUs), with whatever else runs on it.
"""
import argparse
import base64
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import run as it  # noqa: E402  (the integration tests' reader of a page's data)
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--window-size=1400,1000"]

PROBE = r"""
<script>
(function () {  /* after the page's script: its graph, table and heat map are drawn (canvas) */
  void document.body.offsetHeight; /* and laid out */
  var out = { ready: performance.now() };
  try {
    var h = fgView.heat();
    if (h) {
      /* each timing ends with the page laid out again (offsetHeight): the style and layout
         the redraw's changes need are part of it, whether the script asked for them or not */
      var cells = h.cols * h.rows * h.box, t0 = performance.now(), b = document.body;
      fgView.selectRange(Math.floor(cells * 0.45), Math.floor(cells * 0.55));
      void b.offsetHeight;
      out.range = performance.now() - t0;
      t0 = performance.now();
      fgView.selectRange(Math.floor(cells * 0.2), Math.floor(cells * 0.3), true);
      void b.offsetHeight;
      out.diff = performance.now() - t0;
      t0 = performance.now();
      fgView.selectRange(Math.floor(cells / 2), Math.floor(cells / 2) + h.box);
      void b.offsetHeight;
      out.box = performance.now() - t0;
      out.heat = h;
    }
  } catch (e) { out.error = String(e); }
  var p = document.createElement("pre"); p.id = "probe";
  p.textContent = "RES" + "ULT " + JSON.stringify(out); document.body.appendChild(p);
})();
</script>
</body>"""


KEYS = ("ready", "range", "box", "diff")


def probe_once(chromium, page):
    """One load of a copy of page with PROBE: the probe's timings (ms) and heat map."""
    text = open(page, encoding="utf-8").read()
    probed = page + ".probe.html"
    with open(probed, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", PROBE, 1))
    p = subprocess.run([chromium, *FLAGS, "--user-data-dir=" + tempfile.mkdtemp(prefix="tschr"),
                        "--dump-dom", "file://" + probed],
                       capture_output=True, text=True, timeout=600)
    m = re.search(r"RESULT ([^<]*)", p.stdout)
    if not m:
        sys.exit(f"{page}: the page did not finish: {p.stderr[-800:]}")
    r = json.loads(m.group(1).replace("&quot;", '"'))
    if "error" in r:
        sys.exit(f"{page}: the probe failed: {r['error']}")
    return r


def summary(runs):
    """Per timing: (median, min, max) over the runs; and the heat map of the first."""
    keys = [k for k in KEYS if k in runs[0]]
    return ({k: (statistics.median(r[k] for r in runs), min(r[k] for r in runs), max(r[k] for r in runs))
             for k in keys}, runs[0].get("heat"))


def chromium_probe(chromium, page, repeat):
    """Medians (ms) of the probe's timings over `repeat` loads of page, and its heat map."""
    t, heat = summary([probe_once(chromium, page) for _ in range(repeat)])
    return {k: v[0] for k, v in t.items()}, heat


def page_code(rev):
    """The page template as the build assembles it (page/assemble.cmake): viewer.html with its
    /*@FG_SCRIPT@*/ line replaced by model.js then viewer.js — this tree's, or git REV's."""
    def source(path):
        if rev is None:
            return open(os.path.join(ROOT, path), encoding="utf-8").read()
        return subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], capture_output=True, text=True,
                              check=True).stdout
    html = source("flamegraph/page/viewer.html")
    return html.replace("/*@FG_SCRIPT@*/", source("flamegraph/page/model.js") + source("flamegraph/page/viewer.js"), 1)


def leb128(v, out):
    while True:
        out.append((v & 127) | (128 if v > 127 else 0))
        v >>= 7
        if not v:
            return


def pack(entries):
    """fg_time.c's packed form of entries (cell, stack, thread, weight), by cell then stack."""
    packed, prev = bytearray(), (0, 0)
    for i, (c, st, th, w) in enumerate(entries):
        dc = c - prev[0]
        for v in (dc, st - prev[1] if i and not dc else st, th, w):
            leb128(v, packed)
        prev = (c, st)
    return base64.b64encode(bytes(packed)).decode()


def scaled(d, k):
    """d as a run k times as big: each thread's entries again for k-1 copies of it (named
    "NAME #2"...), every frame's weight and the total times k."""
    d = dict(d)
    if "time" not in d:
        return d
    t = d["time"] = dict(d["time"])
    e, nth = t["entries"], len(t["threads"])
    if "packed" in t:  # as written: the packed form only
        del t["entries"]
    if k == 1:
        return d
    entries = [tuple(e[i:i + 4]) for i in range(0, len(e), 4)]
    big = sorted((c, st, th + j * nth, w) for c, st, th, w in entries for j in range(k))
    t["threads"] = t["threads"] + [[tid + 1_000_000 * j, f"{name} #{j + 1}"]
                                   for j in range(1, k) for tid, name in t["threads"]]
    t.pop("entries", None)
    t["n"], t["packed"] = len(big), pack(big)
    nodes, s = list(d["nodes"]), d["stride"]
    for i in range(0, len(nodes), s):
        for f in range(2, s):
            nodes[i + f] *= k
    d["nodes"], d["total"] = nodes, d["total"] * k
    if "totalBase" in d:
        d["totalBase"] *= k
    if d.get("pruned"):
        d["pruned"] = dict(d["pruned"], samples=d["pruned"]["samples"] * k)
    return d


def from_pages(args, out):
    """--from-page: each saved page's data (scaled by --scale) in this tree's page code and in
    --compare REV's, loaded in turn. Returns table rows (name, size, timings, heat, spread)."""
    codes = [("new", page_code(None))] + ([(args.compare, page_code(args.compare))] if args.compare else [])
    rows = []
    for src in args.from_page:
        d = scaled(it.page_data(src), args.scale)
        data = "const FG_DATA = " + json.dumps(d, separators=(",", ":")) + ";"
        base = os.path.splitext(os.path.basename(src))[0] + (f"-x{args.scale}" if args.scale > 1 else "")
        pages = {}
        for label, code in codes:
            pages[label] = os.path.join(out, f"{base}-{label}.html")
            with open(pages[label], "w", encoding="utf-8") as f:
                f.write(code.replace("/*@FG_DATA@*/", data, 1))
        runs = {label: [] for label in pages}
        for _ in range(args.repeat):
            for label in reversed(pages):  # old (if any) then new
                runs[label].append(probe_once(args.chromium, pages[label]))
        n = d["time"]["n"] if "time" in d else 0
        for label in reversed(pages):
            t, heat = summary(runs[label])
            rows.append((f"{base} ({d['total']:,} {d.get('countName', 'samples')}, {n:,} time entries), "
                         f"page code: {'this tree' if label == 'new' else label}",
                         os.path.getsize(pages[label]), t, heat))
    return rows


def agent_run(args, out):
    """The long run: JFR by the agent, its HTML by `dump` near the end. Returns (stats, files)."""
    b = os.path.join(ROOT, args.build)
    agent, launcher = os.path.join(b, "agent", "libsampler.so"), os.path.join(b, "bin", "sampler")
    classes = os.path.join(b, "tests", "integration", "classes")
    jfr, page, stats = (os.path.join(out, n) for n in ("run.jfr", "agent.html", "run.json"))
    seconds = int(args.minutes * 60)
    cmd = ["java", "-Xmx256m", f"-agentpath:{agent}=interval=1ms,file={jfr},stats={stats}", "-cp", classes,
           "Scenarios", "busyidle", str(seconds)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(max(1, seconds - 5))
    d = subprocess.run([launcher, "dump", f"file={page}", str(proc.pid)], capture_output=True, text=True,
                       timeout=300)
    if d.returncode != 0:
        proc.kill()
        sys.exit(f"sampler dump: {d.stdout}{d.stderr}")
    _, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        sys.exit(f"java exited {proc.returncode}: {err[-1500:]}")
    s = json.load(open(stats))
    flat = {}
    for v in s.values():
        if isinstance(v, dict):
            flat.update(v)
    flat.update({k: v for k, v in s.items() if not isinstance(v, dict)})
    tool = os.path.join(out, "tool.html")
    subprocess.run([os.path.join(b, "flamegraph", "flamegraph"), jfr, "-o", tool], check=True, timeout=600)
    return flat, {"agent.html": page, "tool.html": tool, "run.jfr": jfr}


def synthetic_page(args, out):
    """A page of 200 stacks with the time member fg_time.c would write for 24 h of 20 ms cells:
    one busy thread, in one of 20 stacks each cell, another 20 each hour-long phase — 4,320,000
    fine cells merged by the writer's rule (5, 2, 5, 2 ... at a time) to at most 1,000,000
    entries."""
    b = os.path.join(ROOT, args.build)
    folded = os.path.join(out, "synthetic.folded")
    with open(folded, "w") as f:
        for k in range(200):
            f.write(f"[main tid=1];Main.run;Work.step{k % 20};Work.leaf{k} {21600 + k}\n")
    page = os.path.join(out, "synthetic.html")
    subprocess.run([os.path.join(b, "flamegraph", "flamegraph"), folded, "-o", page, "--html-prune", "0"],
                   check=True)
    text = open(page, encoding="utf-8").read()
    at = text.index("const FG_DATA = ") + len("const FG_DATA = ")
    d, _ = json.JSONDecoder().raw_decode(text, at)
    stride, leaves = d["stride"], []
    for i in range(0, len(d["nodes"]), stride):
        if d["names"][d["nodes"][i]].startswith("Work.leaf") if d["nodes"][i] >= 0 else False:
            leaves.append(i // stride)
    cells = 24 * 3600 * 50

    def stack(c):  # 20 stacks an hour-long phase, one of them at random each cell
        return ((c * 2654435761) >> 7) % 20 + 20 * ((c // 180000) % 10)

    # the writer's rule: while more than 1,000,000 entries, cells merged 5, 2, 5, 2 ... at a time
    # (equal stack and thread in a merged cell: one entry)
    merged, step = 1, 0
    while True:
        count = sum(len({stack(c) for c in range(m, min(m + merged, cells))}) for m in range(0, cells, merged)) \
            if merged > 1 else cells
        if count <= 1_000_000:
            break
        merged *= 5 if step % 2 == 0 else 2
        step += 1
    entries, weight = [], 1
    for m in range(0, cells, merged):
        seen = {}
        for c in range(m, min(m + merged, cells)):
            seen[stack(c)] = seen.get(stack(c), 0) + weight
        for s, w in sorted(seen.items()):
            entries += [m // merged, s, 0, w]
    member = {"startMs": 1795800000000, "durationNs": cells * 20_000_000, "cellNs": 20_000_000 * merged,
              "merged": merged, "threads": [[1, "main"]], "marks": [], "marksLost": 0,
              "stacks": [leaves[k] for k in range(200)], "n": len(entries) // 4,
              "packed": pack([entries[i:i + 4] for i in range(0, len(entries), 4)])}
    text = text.replace(',\n"palette":{', ',\n"time":' + json.dumps(member, separators=(",", ":")) +
                        ',\n"palette":{', 1)
    with open(page, "w", encoding="utf-8") as f:
        f.write(text)
    return page, len(entries) // 4, merged


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None)
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--synthetic-only", action="store_true")
    ap.add_argument("--from-page", action="append", metavar="PAGE",
                    help="time the data of a page an earlier run wrote (no run, no synthetic page)")
    ap.add_argument("--scale", type=int, default=1, help="--from-page: the run made K times as big")
    ap.add_argument("--compare", metavar="REV", help="--from-page: REV's page code too, interleaved")
    args = ap.parse_args()
    if (args.scale != 1 or args.compare) and not args.from_page:
        ap.error("--scale and --compare apply to --from-page only")
    if args.scale < 1:
        ap.error("--scale: a whole number from 1")
    out = args.out or tempfile.mkdtemp(prefix="timescale")
    os.makedirs(out, exist_ok=True)
    rows = []
    if args.from_page:
        rows = from_pages(args, out)
        print("| page | MB | ready ms | range ms | one box ms | diff ms | heat map |")
        print("|---|---|---|---|---|---|---|")
        for name, size, t, heat in rows:
            cell = lambda k: f"{t[k][0]:.0f} ({t[k][1]:.0f}-{t[k][2]:.0f})" if k in t else "-"
            hm = f"{heat['cols']}x{heat['rows']} boxes of {heat['box']} cells" if heat else "-"
            print(f"| {name} | {size / 1e6:.1f} | {cell('ready')} | {cell('range')} | {cell('box')} | "
                  f"{cell('diff')} | {hm} |")
        print(f"\n(files in {out}; medians (min-max) of {args.repeat} loads each, interleaved; "
              f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the end)")
        return
    if not args.synthetic_only:
        s, files = agent_run(args, out)
        cap = int(s.get("captures") or s["samples"])
        print(f"run: {args.minutes:g} min of busyidle at 1 ms: {cap} captures, {s['samples']} samples; "
              f"time axis {s['time_entries']} entries, {s['time_kb']} kB allocated "
              f"({1024 * int(s['time_kb']) / cap:.2f} bytes a capture), cells {s['time_cell_ms']} ms, "
              f"coarsened {s['time_coarsened']} times, time_lost {s['time_lost']}")
        for name, path in files.items():
            print(f"  {name}: {os.path.getsize(path) / 1e6:.1f} MB")
        for name in ("agent.html", "tool.html"):
            t, heat = chromium_probe(args.chromium, files[name], args.repeat)
            rows.append((name, os.path.getsize(files[name]), t, heat))
    page, nent, merged = synthetic_page(args, out)
    t, heat = chromium_probe(args.chromium, page, args.repeat)
    rows.append((f"synthetic 24 h ({nent} entries, cells merged {merged} in one)", os.path.getsize(page), t, heat))
    print(f"\n| page | MB | ready ms | range ms | one box ms | diff ms | heat map |")
    print("|---|---|---|---|---|---|---|")
    for name, size, t, heat in rows:
        hm = f"{heat['cols']}x{heat['rows']} boxes of {heat['box']} cells" if heat else "-"
        print(f"| {name} | {size / 1e6:.1f} | {t['ready']:.0f} | {t.get('range', 0):.0f} | "
              f"{t.get('box', 0):.0f} | {t.get('diff', 0):.0f} | {hm} |")
    print(f"\n(files in {out}; medians of {args.repeat} loads; {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()

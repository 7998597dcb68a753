#!/usr/bin/env python3
"""timescale.py — the time axis at scale (issue "When did it happen", item 5): a long profile's
time data in the agent, its files, and its page in headless Chromium.

  python3 bench/timescale.py [--minutes 10] [--build build] [--out DIR] [--chromium PATH]
                             [--synthetic-only] [--repeat 3]

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
   canvases: interactive); `range` — choosing a range on the heat map (the graph, the table and
   the heat map redrawn for it: fgView.selectRange, synchronous), for a tenth of the run and
   for a single box; `diff` — a second range against the first.

Prints one table; the numbers are this machine's (2 vCPUs), with whatever else runs on it.
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
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--window-size=1400,1000"]

PROBE = r"""
<script>
(function () {  /* after the page's script: its graph, table and heat map are drawn (canvas) */
  var out = { ready: performance.now() };
  try {
    var h = fgView.heat();
    if (h) {
      var cells = h.cols * h.rows * h.box, t0 = performance.now();
      fgView.selectRange(Math.floor(cells * 0.45), Math.floor(cells * 0.55));
      out.range = performance.now() - t0;
      t0 = performance.now();
      fgView.selectRange(Math.floor(cells * 0.2), Math.floor(cells * 0.3), true);
      out.diff = performance.now() - t0;
      t0 = performance.now();
      fgView.selectRange(Math.floor(cells / 2), Math.floor(cells / 2) + h.box);
      out.box = performance.now() - t0;
      out.heat = h;
    }
  } catch (e) { out.error = String(e); }
  var p = document.createElement("pre"); p.id = "probe";
  p.textContent = "RES" + "ULT " + JSON.stringify(out); document.body.appendChild(p);
})();
</script>
</body>"""


def chromium_probe(chromium, page, repeat):
    """Medians (ms) of the probe's timings over `repeat` loads of a copy of page with PROBE."""
    text = open(page, encoding="utf-8").read()
    probed = page + ".probe.html"
    with open(probed, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", PROBE, 1))
    runs = []
    for _ in range(repeat):
        p = subprocess.run([chromium, *FLAGS, "--user-data-dir=" + tempfile.mkdtemp(prefix="tschr"),
                            "--dump-dom", "file://" + probed],
                           capture_output=True, text=True, timeout=600)
        m = re.search(r"RESULT ([^<]*)", p.stdout)
        if not m:
            sys.exit(f"{page}: the page did not finish: {p.stderr[-800:]}")
        r = json.loads(m.group(1).replace("&quot;", '"'))
        if "error" in r:
            sys.exit(f"{page}: the probe failed: {r['error']}")
        runs.append(r)
    keys = [k for k in ("ready", "range", "box", "diff") if k in runs[0]]
    return {k: statistics.median(r[k] for r in runs) for k in keys}, [r.get("heat") for r in runs][0]


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
    packed, prev = bytearray(), (0, 0)
    for i in range(0, len(entries), 4):  # fg_time.c's form: LEB128, cell and stack as deltas
        c, st, th, w = entries[i:i + 4]
        dc = c - prev[0]
        for v in (dc, st - prev[1] if i and not dc else st, th, w):
            while True:
                packed.append((v & 127) | (128 if v > 127 else 0))
                v >>= 7
                if not v:
                    break
        prev = (c, st)
    member = {"startMs": 1795800000000, "durationNs": cells * 20_000_000, "cellNs": 20_000_000 * merged,
              "merged": merged, "threads": [[1, "main"]], "marks": [], "marksLost": 0,
              "stacks": [leaves[k] for k in range(200)], "n": len(entries) // 4,
              "packed": base64.b64encode(bytes(packed)).decode()}
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
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="timescale")
    os.makedirs(out, exist_ok=True)
    rows = []
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

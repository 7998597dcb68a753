// test_page.js — the flame graph page's pure functions (flamegraph/page/model.js) under node's
// own test runner: numbers, kinds and colours from the data's palette, the tree and its views
// (thread, reversed, "larger" diff widths), layout, search, the function table, callers and
// callees, the URL state. ctest runs it as test_flamegraph_page (label unit); without node the
// test reports "skipped". The page as a whole is tested in Chromium (test_page_browser.py).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const M = require(path.join(__dirname, "..", "..", "flamegraph", "page", "model.js"));

/* A page's data as fg_html.c writes it: nodes in preorder (name, depth, total, self). */
function data(names, rows, extra) {
  return Object.assign({ names, stride: 4, nodes: rows.flat(), total: rows[0][2] }, extra);
}
const arr = (a) => Array.from(a);

/* a palette shaped like fg_kind.c's (ids, suffixes; colours made up) */
const PALETTE = {
  kinds: [
    { id: "native", label: "native (C)", suffix: "", base: [200, 0, 0], spread: [50, 40, 0] },
    { id: "java", label: "Java native method", suffix: "", base: [0, 200, 0], spread: [0, 0, 0] },
    { id: "jit", label: "JIT-compiled", suffix: "_[j]", base: [0, 200, 0], spread: [0, 0, 0] },
    { id: "inlined", label: "inlined", suffix: "_[i]", base: [0, 0, 200], spread: [0, 0, 0] },
  ],
  legend: [
    { id: "jit", label: "Java (JIT)", help: "", kinds: [2, 1] },
    { id: "inlined", label: "inlined", help: "", kinds: [3] },
    { id: "native", label: "native (C)", help: "", kinds: [0] },
  ],
};

test("numbers: thousands separators, one decimal, <0.1% when tiny but not zero", () => {
  assert.equal(M.fmt(1234567), "1,234,567");
  assert.equal(M.pct(1, 3), "33.3%");
  assert.equal(M.pct(1, 100000), "<0.1%");
  assert.equal(M.pct(4, 10000), "<0.1%"); /* 0.04% would round to 0.0% */
  assert.equal(M.pct(5, 10000), "0.1%");
  assert.equal(M.pct(0, 10), "0.0%");
  assert.equal(M.pct(3, 0), "0.0%");
});

test("kinds: the suffix of the name's kind is hidden, nothing else", () => {
  const [, java, jit] = PALETTE.kinds;
  assert.equal(M.shownName("a/B.c_[j]", jit), "a/B.c");
  assert.equal(M.shownName("a/B.c_[j]", java), "a/B.c_[j]"); /* the kind decides, not the text */
  assert.equal(M.shownName("x_[i]", jit), "x_[i]");
  assert.equal(M.hasJavaKinds(["native", "java"]), false);
  assert.equal(M.hasJavaKinds(["native", "inlined"]), true);
  assert.equal(M.kindLabel(java, false), "Java");
  assert.equal(M.kindLabel(java, true), "Java native method");
  assert.equal(M.keyLabel(PALETTE.legend[0], false), "Java");
  assert.equal(M.keyLabel(PALETTE.legend[0], true), "Java (JIT)");
});

test("kinds: the legend's order, then any kind it leaves out", () => {
  const { order, col } = M.kindOrder(PALETTE);
  assert.deepEqual(order, [2, 1, 3, 0]);
  assert.deepEqual(arr(col), [3, 1, 0, 2]);
  const { order: o2 } = M.kindOrder({ kinds: PALETTE.kinds, legend: [PALETTE.legend[1]] });
  assert.deepEqual(o2, [3, 0, 1, 2]);
});

test("colours: base + spread times the name's hash, the same name the same colour", () => {
  const native = PALETTE.kinds[0];
  assert.equal(M.rgbOf(native, 0), "rgb(200,0,0)");
  assert.equal(M.rgbOf(native, 0.5), "rgb(225,20,0)");
  assert.equal(M.hash(""), 2166136261);
  assert.equal(M.hash("a"), 0xe40c292c); /* FNV-1a 32 */
  const c = M.nameColour(native, "memcpy");
  assert.equal(c, M.nameColour(native, "memcpy"));
  const [r, g, b] = c.match(/\d+/g).map(Number);
  assert.ok(r >= 200 && r < 250 && g >= 0 && g < 40 && b === 0, c);
  assert.notEqual(M.nameColour(native, "memset"), c);
});

/* root(10) -> a(8) -> b(5), c(3) -> a(1); root -> d(2) */
const NAMES = ["a", "b", "c", "d"];
const D = data(NAMES, [
  [-1, 0, 10, 0],
  [0, 1, 8, 0],
  [1, 2, 5, 5],
  [2, 2, 3, 2],
  [0, 3, 1, 1],
  [3, 1, 2, 2],
]);

test("tree: preorder arrays with each subtree's end, parents, depth", () => {
  const t = M.fromData(D);
  assert.equal(t.n, 6);
  assert.deepEqual(arr(t.end), [6, 5, 3, 5, 5, 6]);
  assert.deepEqual(arr(t.parent), [-1, 0, 1, 1, 3, 0]);
  assert.equal(t.maxDepth, 3);
  assert.deepEqual(arr(t.tb), [0, 0, 0, 0, 0, 0]);
  const d = M.fromData({ names: ["x"], stride: 6, nodes: [-1, 0, 4, 0, 6, 0, 0, 1, 4, 4, 6, 6] });
  assert.deepEqual(
    [arr(d.tb), arr(d.sb)],
    [
      [6, 6],
      [0, 6],
    ],
  );
});

test("thread: the root over one child's subtree", () => {
  const t = M.threadOf(M.fromData(D), 1);
  assert.deepEqual(arr(t.name), [-1, 0, 1, 2, 0]);
  assert.deepEqual(arr(t.total), [8, 8, 5, 3, 1]);
  assert.deepEqual(arr(t.end), [5, 5, 3, 5, 5]);
});

test("reversed: stacks merged at their leaves, self samples only, names in order", () => {
  const r = M.reversedOf(M.fromData(D), NAMES);
  const rows = [];
  for (let i = 0; i < r.n; i++)
    rows.push([i ? NAMES[r.name[i]] : "all", r.depth[i], r.total[i], r.self[i]]);
  assert.deepEqual(rows, [
    ["all", 0, 10, 0],
    ["a", 1, 1, 0] /* the inner a: a <- c <- a */,
    ["c", 2, 1, 0],
    ["a", 3, 1, 1],
    ["b", 1, 5, 0],
    ["a", 2, 5, 5],
    ["c", 1, 2, 0],
    ["a", 2, 2, 2],
    ["d", 1, 2, 2],
  ]);
});

test("threads: the root's children that are threads, largest first", () => {
  const t = M.fromData(D);
  assert.deepEqual(
    M.threadsOf(t, (nm) => nm !== 1),
    [1, 5],
  );
  assert.deepEqual(M.threadLabel("[main tid=12]"), { name: "main", tid: "12" });
  assert.equal(M.threadLabel("[GC active]"), null);
});

test("diff: larger widths, change of share, colour by the largest change", () => {
  const t = M.fromData({
    names: ["old", "new"],
    stride: 6,
    nodes: [-1, 0, 4, 0, 6, 0, 0, 1, 0, 0, 6, 6, 1, 1, 4, 4, 0, 0],
  });
  assert.deepEqual(arr(M.largerWidths(t)), [10, 6, 4]);
  assert.equal(M.change(t, 1, 4, 6), -1);
  assert.equal(M.change(t, 2, 4, 6), 1);
  assert.equal(M.diffScale(t, 4, 6), 1);
  assert.equal(M.diffColour(0, 1), "hsl(45,10%,72%)");
  assert.equal(M.diffColour(1, 1), "hsl(0,80%,55%)");
  assert.equal(M.diffColour(-0.5, 1), "hsl(220,60%,69%)");
});

test("layout: zoomed frame spans the width, ancestors too, narrow subtrees left out", () => {
  const t = M.fromData(D);
  let { boxes, deepest } = M.layout(t, t.total, 0, 100, 1);
  const rows = (b) => {
    const r = [];
    for (let k = 0; k < b.length; k += 3) r.push([b[k], b[k + 1], b[k + 2]]);
    return r;
  };
  assert.deepEqual(rows(boxes), [
    [0, 0, 100],
    [1, 0, 80],
    [2, 0, 50],
    [3, 50, 30],
    [4, 50, 10],
    [5, 80, 20],
  ]);
  assert.equal(deepest, 3);
  ({ boxes, deepest } = M.layout(t, t.total, 3, 30, 11)); /* zoom into c: a(1) is 10 px */
  assert.deepEqual(rows(boxes), [
    [1, 0, 30],
    [0, 0, 30],
    [3, 0, 30],
  ]);
  assert.equal(deepest, 2);
  assert.equal(M.fit("abcdefghij", 67), "abcdefghij");
  assert.equal(M.fit("abcdefghij", 60), "abcdefg..");
  assert.equal(M.fit("abcdefghij", 15), "");
});

test("search: a match inside a match is marked but not counted twice", () => {
  const t = M.fromData(D);
  const { matchSet, matches, sum } = M.searchTree(t, [true, false, false, false], t.total);
  assert.equal(sum, 8);
  assert.deepEqual(matches, [1, 4]);
  assert.deepEqual(arr(matchSet), [0, 1, 0, 0, 1, 0]);
  assert.equal(M.searchTree(t, [false, false, false, true], t.total).sum, 2);
  const re = new RegExp(M.exactly("a.b$(c)"));
  assert.ok(re.test("a.b$(c)") && !re.test("axb$(c)") && !re.test("a.b$(c)d"));
});

/* The browser test's method M: JIT 10 in its own code; inlined 20 + 7 + 3 nearer the sample
 * than an outer JIT frame or alone; interpreted 5. Expected split: jit 10, inlined 30,
 * interpreted 5 — a stack holding M twice counted once. */
test("function table: one row per method, recursion once, total split by nearest kind", () => {
  const names = ["M_[j]", "M_[i]", "M_[0]", "x"];
  const interpreted = { id: "interpreted", suffix: "_[0]" };
  const nameKinds = [PALETTE.kinds[2], PALETTE.kinds[3], interpreted, PALETTE.kinds[0]];
  const shown = names.map((n, k) => M.shownName(n, nameKinds[k]));
  assert.deepEqual(shown, ["M", "M", "M", "x"]);
  const t = M.fromData(
    data(names, [
      [-1, 0, 50, 0],
      [0, 1, 30, 10] /* M_[j] self 10 */,
      [1, 2, 20, 20] /*   M_[i] self 20 */,
      [3, 1, 15, 0] /* x */,
      [1, 2, 10, 0] /*   M_[i] */,
      [3, 3, 10, 10] /*     x: a sample under inlined M */,
      [2, 1, 5, 5] /* M_[0] */,
    ]),
  );
  const { methodOf, methods } = M.methodsOf(shown);
  assert.deepEqual(methods, ["M", "x"]);
  assert.deepEqual(arr(methodOf), [0, 0, 0, 1]);
  const kindCol = [0, 1, 2, 3]; /* jit, inlined, interpreted, native */
  const { rows, byKind } = M.functionRows(t, methodOf, methods, kindCol, 4);
  assert.deepEqual(rows, [
    { m: 0, name: "M", self: 35, total: 45 },
    { m: 1, name: "x", self: 10, total: 15 } /* x in x: once */,
  ]);
  assert.deepEqual(M.partsOf(byKind, 0, 4), [
    [0, 10],
    [1, 30],
    [2, 5],
  ]);
  assert.deepEqual(M.partsOf(byKind, 1, 4), [[3, 15]]);
  assert.deepEqual(
    M.sortRows(rows.slice(), "total", 1).map((r) => r.name),
    ["x", "M"],
  );
  assert.deepEqual(
    M.sortRows(rows.slice(), "name", -1).map((r) => r.name),
    ["x", "M"],
  );
  assert.deepEqual(
    M.sortRows(rows.slice(), "selfp", -1).map((r) => r.name),
    ["M", "x"],
  );
  const rel = M.relativesOf(t, 1, methodOf, methods);
  assert.deepEqual(rel.callers, [
    ["(root)", 15],
    ["M", 10],
  ]);
  assert.deepEqual(rel.callees, [["M", 10]]);
});

test("text: escaping for HTML attributes and text", () => {
  assert.equal(M.esc(`<a href="x">&</a>`), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
});

test("URL state: what differs from the default, and back", () => {
  const st = { src: "a|b", zoom: 7, reverse: true, icicle: false, widthMode: 2 };
  const h = M.encodeState(st, "[main tid=1]");
  assert.equal(h, "t=%5Bmain+tid%3D1%5D&s=a%7Cb&z=7&r=1&w=2");
  assert.equal(M.encodeState({ icicle: true }, null), "i=1");
  assert.equal(M.decodeState("i=1").icicle, true);
  /* a page of several events: the one shown first */
  assert.equal(M.encodeState({ event: "alloc", reverse: true }, null), "e=alloc&r=1");
  assert.equal(M.decodeState("e=alloc&r=1").event, "alloc");
  assert.deepEqual(M.decodeState(h), {
    event: "",
    thread: "[main tid=1]",
    src: "a|b",
    zoom: 7,
    reverse: true,
    icicle: false,
    widthMode: 2,
    range: null,
    range2: null,
    view: null,
  });
  assert.equal(M.encodeState({ src: "", zoom: 0, widthMode: 0 }, null), "");
  assert.equal(M.decodeState("w=5").widthMode, 2);
});

/* A page with a time axis: all > main > {a > x, b}; x pruned in the page (its weight in a's
 * total only). Cells of 20 ms; threads 0 (tid 11) and 1 (tid 12). */
function timed() {
  const D = data(
    ["main", "a", "b"],
    [
      [-1, 0, 10, 0],
      [0, 1, 10, 0],
      [1, 2, 6, 4],
      [2, 2, 4, 4],
    ],
    {
      time: {
        startMs: 1700000000000,
        durationNs: 200e6,
        cellNs: 20e6,
        merged: 1,
        threads: [
          [11, "main"],
          [12, "w"],
        ],
        stacks: [2, 3, -3],
        /* cell, stack, thread, weight: a 3 in cell 0, b 4 in cells 1-2, a 1 in cell 5, and
           2 pruned below a in cell 5 (thread 12) */
        entries: [0, 0, 0, 3, 1, 1, 0, 2, 2, 1, 1, 2, 5, 0, 0, 1, 5, 2, 1, 2],
      },
    },
  );
  return { D, t: M.fromData(D), tm: M.timeOf(D) };
}

test("time axis: read from the page's data; none without it", () => {
  const { tm } = timed();
  assert.equal(tm.n, 5);
  assert.equal(tm.ncells, 10); /* 200 ms of 20 ms cells, past the last entry */
  assert.deepEqual(arr(tm.cell), [0, 1, 2, 5, 5]);
  assert.equal(M.timeOf(data(["a"], [[-1, 0, 1, 0]])), null);
});

test("time axis: a range's weights per frame, pruned weight in its ancestor's total only", () => {
  const { t, tm } = timed();
  const all = M.rangeWeights(t, tm, 0, tm.ncells, -1);
  assert.deepEqual(arr(all.total), [10, 10, 6, 4]); /* the whole run: the page's own totals */
  assert.deepEqual(arr(all.self), [0, 0, 4, 4]);
  assert.equal(all.sum, 10);
  const r = M.rangeWeights(t, tm, 1, 5, -1); /* cells 1..4: b only */
  assert.deepEqual(arr(r.total), [4, 4, 0, 4]);
  const late = M.rangeWeights(t, tm, 5, 6, -1);
  assert.deepEqual(arr(late.total), [3, 3, 3, 0]);
  assert.deepEqual(arr(late.self), [0, 0, 1, 0]); /* the 2 pruned below a are not a's self */
  const w = M.rangeWeights(t, tm, 0, tm.ncells, 1); /* thread tid 12 */
  assert.deepEqual(arr(w.total), [4, 4, 2, 2]);
  assert.equal(M.timeThreadOf(tm, "12"), 1);
  assert.equal(M.timeThreadOf(tm, 99), -1);
  assert.deepEqual(arr(M.timeThreadWeights(tm)), [6, 4]);
});

test("time axis: a range's tree keeps the nodes; two ranges are a differential", () => {
  const { t, tm } = timed();
  const one = M.rangeTree(t, tm, [[0, 1]], -1);
  assert.equal(one.n, t.n);
  assert.deepEqual(arr(one.total), [3, 3, 3, 0]);
  assert.deepEqual(arr(one.parent), arr(t.parent));
  const two = M.rangeTree(
    t,
    tm,
    [
      [0, 1],
      [1, 3],
    ],
    -1,
  );
  assert.deepEqual(arr(two.total), [4, 4, 0, 4]); /* the second range: the new profile */
  assert.deepEqual(arr(two.tb), [3, 3, 3, 0]); /* the first: its base */
  assert.deepEqual(arr(two.sb), [0, 0, 3, 0]);
  assert.ok(M.change(two, 3, two.total[0], two.tb[0]) > 0); /* b grew: red in the diff view */
  assert.ok(M.change(two, 2, two.total[0], two.tb[0]) < 0);
});

test("heat map: columns of 50 boxes, boxes as wide as the width needs", () => {
  assert.deepEqual(M.heatLayout(0, 9000, 1200, 4), {
    v0: 0,
    v1: 9000,
    rows: 50,
    box: 1,
    cols: 180,
  });
  assert.deepEqual(M.heatLayout(0, 30000, 1200, 4).box, 2); /* 10 min of 20 ms cells */
  assert.deepEqual(M.heatLayout(0, 4320000, 1200, 4).box, 500); /* 24 h */
  assert.deepEqual(M.heatLayout(10, 20, 1200, 4), { v0: 10, v1: 20, rows: 10, box: 1, cols: 1 });
  const { tm } = timed();
  const hl = M.heatLayout(0, 10, 1200, 4);
  const { values, max } = M.heatValues(tm, hl, -1);
  assert.deepEqual(arr(values), [3, 2, 2, 0, 0, 3, 0, 0, 0, 0]);
  assert.equal(max, 3);
  const coarse = { v0: 0, v1: 10, rows: 2, box: 2, cols: 3 };
  assert.deepEqual(arr(M.heatValues(tm, coarse, -1).values), [5, 2, 3, 0, 0, 0]);
  assert.deepEqual(arr(M.heatValues(tm, coarse, 1).values), [0, 2, 2, 0, 0, 0]);
  assert.deepEqual(M.boxRange(coarse, 3, 1), [2, 8]);
  assert.deepEqual(M.boxRange(coarse, 4, 4), [8, 10]);
  assert.deepEqual(M.boxCells(coarse, 4), [8, 10]);
  assert.equal(M.heatColour(0, 3), null);
  assert.notEqual(M.heatColour(3, 3), M.heatColour(1, 3));
});

test("time axis: the writer's packed entries read as the array form", () => {
  /* fg_time.c's form of test_html.c's time_axis_exact: cells 0, 1, 1; stacks 0, 0, 1 */
  const base = {
    startMs: 0,
    durationNs: 40e6,
    cellNs: 20e6,
    threads: [[7, "main"]],
    stacks: [2, 3],
  };
  const packed = M.timeOf({ time: { ...base, n: 3, packed: "AAAAAgEAAQEAAQEB" } }),
    plain = M.timeOf({ time: { ...base, entries: [0, 0, 0, 2, 1, 0, 1, 1, 1, 1, 1, 1] } });
  for (const k of ["cell", "stack", "thread", "weight"])
    assert.deepEqual(arr(packed[k]), arr(plain[k]));
  assert.equal(packed.n, 3);
  /* numbers past 32 bits: a weight of 2^40 + 5 (LEB128: 85 80 80 80 80 20) */
  const big = M.timeOf({
    time: {
      ...base,
      n: 1,
      packed: Buffer.from([0, 1, 0, 0x85, 0x80, 0x80, 0x80, 0x80, 0x20]).toString("base64"),
    },
  });
  assert.deepEqual(
    [big.cell[0], big.stack[0], big.thread[0], big.weight[0]],
    [0, 1, 0, 2 ** 40 + 5],
  );
});

test("heat map: marks in the boxes they touch, with their time there", () => {
  const { tm } = timed();
  assert.deepEqual(tm.marks, []);
  tm.marks = [
    { at: 25e6, dur: 30e6, what: "GC pause" } /* cells 1-2: 15 ms in each */,
    { at: 170e6, dur: 0, what: "profile written: kill -3" } /* cell 8 */,
    { at: 185e6, dur: 2e6, what: "GC pause" } /* cell 9 */,
  ];
  const fine = M.markBoxes(tm, M.heatLayout(0, 10, 1200, 4));
  assert.equal(fine[0], null);
  assert.deepEqual(fine[1], { "GC pause": { n: 1, ns: 15e6 } });
  assert.deepEqual(fine[2], { "GC pause": { n: 1, ns: 15e6 } });
  assert.deepEqual(fine[8], { "profile written: kill -3": { n: 1, ns: 0 } });
  assert.deepEqual(fine[9], { "GC pause": { n: 1, ns: 2e6 } });
  const coarse = M.markBoxes(tm, { v0: 0, v1: 10, rows: 2, box: 5, cols: 1 });
  assert.deepEqual(coarse[0], { "GC pause": { n: 1, ns: 30e6 } });
  assert.deepEqual(coarse[1], {
    "profile written: kill -3": { n: 1, ns: 0 },
    "GC pause": { n: 1, ns: 2e6 },
  });
  const zoomed = M.markBoxes(tm, M.heatLayout(2, 5, 1200, 4)); /* the view cuts the first pause */
  assert.deepEqual(zoomed[0], { "GC pause": { n: 1, ns: 15e6 } });
  assert.deepEqual(zoomed.slice(1), [null, null]);
  assert.deepEqual(M.markTotals(tm), {
    "GC pause": { n: 2, ms: 32 },
    "profile written: kill -3": { n: 1, ms: 0 },
  });
});

test("time axis: seconds and ranges as the page says them", () => {
  const { tm } = timed();
  assert.equal(M.secondsAt(tm, 50), 1);
  assert.equal(M.rangeText(tm, [617, 750]), "12.34 s – 15 s");
  assert.match(M.clockAt(tm, 0), /^\d\d:\d\d:\d\d\.000$/);
});

test("URL state: the ranges and the heat map's view, and back", () => {
  const st = { src: "", zoom: 0, widthMode: 0, range: [5, 9], range2: [12, 20], view: [0, 100] };
  const h = M.encodeState(st, null);
  assert.equal(h, "h=5-9&h2=12-20&hv=0-100");
  const back = M.decodeState(h);
  assert.deepEqual([back.range, back.range2, back.view], [st.range, st.range2, st.view]);
  assert.equal(M.decodeState("h2=1-2").range2, null); /* a second range needs a first */
  assert.equal(M.decodeState("h=9-5").range, null); /* empty or reversed: none */
  assert.equal(M.decodeState("h=x").range, null);
  assert.equal(M.encodeState({ range: null, range2: [1, 2] }, null), "");
});

test("heat map: the boxes a range touches and those it fades, as box-by-box checks say", () => {
  /* the boxes a range touches, box by box as the page once tested each one */
  const touched = (hl, r) => {
    const ks = [];
    for (let k = 0; k < M.heatBoxes(hl); k++) {
      const c = M.boxCells(hl, k);
      if (r && c[0] < r[1] && c[1] > r[0]) ks.push(k);
    }
    return ks;
  };
  const span = (b) => (b ? Array.from({ length: b[1] - b[0] }, (_, i) => b[0] + i) : []);
  /* boxes as runs [first, last + 1] (short to compare), in the order given */
  const runs = (ks) => {
    const out = [];
    for (const k of ks)
      if (out.length && out[out.length - 1][1] === k) out[out.length - 1][1]++;
      else out.push([k, k + 1]);
    return out;
  };
  /* a rectangle [col, row, cols, rows] as the boxes it covers, checked to lie in the grid */
  const covered = (hl, rects) =>
    rects.flatMap(([c, r, nc, nr]) => {
      assert.ok(r >= 0 && r + nr <= hl.rows && nc >= 1 && nr >= 1);
      const ks = [];
      for (let x = c; x < c + nc; x++) for (let y = r; y < r + nr; y++) ks.push(x * hl.rows + y);
      return ks;
    });
  /* a cell a box (a 10-minute run's view at 20 ms), boxes of 2 and of 500 cells (coarsened),
     a zoomed view, a last column part full, a view of fewer cells than rows */
  const layouts = [
    M.heatLayout(0, 9000, 1200, 4),
    M.heatLayout(0, 29756, 1353, 4),
    M.heatLayout(0, 4320000, 1200, 4),
    M.heatLayout(1000, 1777, 1200, 4),
    { v0: 0, v1: 23, rows: 5, box: 2, cols: 3 },
    M.heatLayout(10, 20, 1200, 4),
  ];
  for (const hl of layouts) {
    const n = M.heatBoxes(hl),
      cells = hl.v1 - hl.v0;
    assert.equal(n, touched(hl, [hl.v0, hl.v1]).length);
    const edges = [0, 1, hl.box - 1, hl.box, hl.box + 1, (hl.rows - 1) * hl.box, hl.rows * hl.box];
    const at = [...edges, ...edges.map((e) => cells - e), Math.floor(cells / 3), cells + 5];
    const ranges = [null, [hl.v0 - 7, hl.v0 + 1], [hl.v1 - 1, hl.v1 + 9], [hl.v1, hl.v1 + 3]];
    for (const a of at) for (const b of at) if (a < b) ranges.push([hl.v0 + a, hl.v0 + b]);
    /* the large layouts: a fifth of them (a check walks every box) */
    const some = n > 1000 ? ranges.filter((_, i) => i < 4 || i % 5 === 0) : ranges;
    for (const r of some) {
      assert.deepEqual(
        runs(span(M.rangeBoxes(hl, r))),
        runs(touched(hl, r)),
        `${JSON.stringify(hl)} ${r}`,
      );
      const b = M.rangeBoxes(hl, r) || [0, n];
      assert.deepEqual(runs(covered(hl, M.boxRects(hl, b[0], b[1]))), [b]);
      assert.ok(M.boxRects(hl, b[0], b[1]).length <= 3);
    }
    /* a range and a second one (the differential): the boxes neither touches, in runs (every
       pair in the small layouts, some in the large) */
    const step = n > 50 ? 7 : 1;
    for (let i = 0; i < some.length; i += step)
      for (let j = 1; j < some.length; j += step) {
        const r1 = some[i],
          r2 = some[j],
          out = M.boxesOutside(hl, [r1, r2]),
          inside = new Set([...touched(hl, r1), ...touched(hl, r2)]),
          want = [];
        for (let k = 0; k < n; k++) if (!inside.has(k)) want.push(k);
        assert.deepEqual(
          runs(out.flatMap(([a, b]) => covered(hl, M.boxRects(hl, a, b)))),
          runs(want),
          `${JSON.stringify(hl)} ${r1} ${r2}`,
        );
      }
  }
});

test("numbers and heat colours: the same text as the formulas they stand for", () => {
  for (const n of [0, 7, 999, 1000, 1234567, 634098, 1.5, 2.25, 1e15])
    assert.equal(M.fmt(n), n.toLocaleString("en-US"));
  for (let max = 1; max <= 300; max += 37)
    for (let v = 1; v <= max; v++) {
      const f = Math.sqrt(v / max);
      assert.equal(
        M.heatColour(v, max),
        `hsl(${Math.round(50 - 50 * f)},90%,${Math.round(88 - 50 * f)}%)`,
      );
    }
});

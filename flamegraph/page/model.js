/*
 * model.js — the flame graph page's pure functions: reading the page data (FG_DATA, schema in
 * flamegraph/README.md), the tree and its views (one thread, reversed, "larger" diff widths),
 * layout, search, the function table, callers and callees, numbers and colours, the time axis
 * (a range's weights per frame, the heat map's boxes, the range in the URL). No DOM here:
 * viewer.js draws and handles events; tests/flamegraph/test_page.js runs these under node.
 * The build (page/assemble.cmake) pastes this file and viewer.js into the page's one script;
 * under node the same file is a CommonJS module.
 */
"use strict";

const fgModel = (function () {
  /* ---- numbers ----
   * Counts with thousands separators (one formatter for all: toLocaleString makes one a call,
   * ~20 us, and a redraw formats thousands of numbers); percentages with one decimal, "<0.1%"
   * when smaller but not zero. */
  const NUMBER = new Intl.NumberFormat("en-US");
  const fmt = (n) => NUMBER.format(n);
  function pct(n, t) {
    const p = t ? (100 * n) / t : 0;
    return p > 0 && p < 0.05 ? "<0.1%" : p.toFixed(1) + "%";
  }

  /* ---- frame kinds and colours ----
   * The kinds, their colours and the legend come from the page data (fg_kind.c's tables);
   * each name's kind too ("nameKinds"): nothing here derives a kind from a name. A colour is
   * its kind's base plus up to the spread times a hash of the name (the same name, the same
   * colour); the legend shows base + spread / 2. */
  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 16777619);
    }
    return h >>> 0;
  }
  const rgbOf = (kind, v) => {
    const b = kind.base,
      d = kind.spread;
    return `rgb(${Math.floor(b[0] + d[0] * v)},${Math.floor(b[1] + d[1] * v)},${Math.floor(b[2] + d[2] * v)})`;
  };
  /* a name's colour: its kind's range at the name's hash */
  const nameColour = (kind, name) => rgbOf(kind, (hash(name) >>> 8) / 16777216);
  /* the name without its kind's suffix ("Foo.bar_[j]" -> "Foo.bar") */
  const shownName = (name, kind) =>
    kind.suffix && name.endsWith(kind.suffix) ? name.slice(0, -kind.suffix.length) : name;
  /* Kinds with a suffix the agent writes for Java frames: when none is in the profile, plain
   * Java names are simply "Java" (not native methods). */
  const JAVA_SUFFIXED = ["jit", "inlined", "interpreted"];
  const hasJavaKinds = (kindIds) => kindIds.some((k) => JAVA_SUFFIXED.includes(k));
  /* what a frame's details call its kind */
  const kindLabel = (kind, hasKinds) => (kind.id === "java" && !hasKinds ? "Java" : kind.label);
  /* what a legend key says */
  const keyLabel = (key, hasKinds) => (key.id === "jit" && !hasKinds ? "Java" : key.label);
  /* The kinds in legend order (the function table's kind split follows it): indices into
   * palette.kinds, and each kind's position in that order. */
  function kindOrder(palette) {
    const order = [];
    for (const key of palette.legend)
      for (const k of key.kinds) if (!order.includes(k)) order.push(k);
    for (let k = 0; k < palette.kinds.length; k++) if (!order.includes(k)) order.push(k);
    const col = new Int32Array(palette.kinds.length);
    order.forEach((k, i) => (col[k] = i));
    return { order, col };
  }

  /* ---- the tree: parallel arrays in preorder ---- */
  function newTree(n) {
    return {
      n,
      name: new Int32Array(n),
      depth: new Int32Array(n),
      total: new Float64Array(n),
      self: new Float64Array(n),
      tb: new Float64Array(n),
      sb: new Float64Array(n),
    };
  }
  /* The page data's nodes (stride 4: name, depth, total, self; 6 adds the base's total and
   * self) as a tree. */
  function fromData(D) {
    const S = D.stride,
      N = D.nodes.length / S,
      t = newTree(N);
    for (let i = 0, o = 0; i < N; i++, o += S) {
      t.name[i] = D.nodes[o];
      t.depth[i] = D.nodes[o + 1];
      t.total[i] = D.nodes[o + 2];
      t.self[i] = D.nodes[o + 3];
      if (S >= 6) {
        t.tb[i] = D.nodes[o + 4];
        t.sb[i] = D.nodes[o + 5];
      }
    }
    return finish(t);
  }
  /* adds the end of each subtree, the parent, the maximum depth */
  function finish(t) {
    const n = t.n;
    t.end = new Int32Array(n);
    t.parent = new Int32Array(n);
    t.maxDepth = 0;
    const stack = [];
    for (let i = 0; i < n; i++) {
      while (stack.length && t.depth[stack[stack.length - 1]] >= t.depth[i]) t.end[stack.pop()] = i;
      t.parent[i] = stack.length ? stack[stack.length - 1] : -1;
      stack.push(i);
      if (t.depth[i] > t.maxDepth) t.maxDepth = t.depth[i];
    }
    while (stack.length) t.end[stack.pop()] = n;
    return t;
  }
  /* One thread: the root over the subtree of the root's child c (preorder keeps it
   * contiguous). */
  function threadOf(t, c) {
    const n = 1 + t.end[c] - c,
      r = newTree(n);
    r.name[0] = t.name[0];
    r.total[0] = t.total[c];
    r.tb[0] = t.tb[c];
    for (let k = 1, i = c; k < n; k++, i++) {
      r.name[k] = t.name[i];
      r.depth[k] = t.depth[i];
      r.total[k] = t.total[i];
      r.self[k] = t.self[i];
      r.tb[k] = t.tb[i];
      r.sb[k] = t.sb[i];
    }
    return finish(r);
  }
  /* Reversed ("merge at the leaves"): every node's self count is a stack that ends there.
   * Siblings are in name order, like the writer's. */
  function reversedOf(t, names) {
    const kids = [new Map()],
      rn = [-1],
      tot = [0],
      slf = [0],
      tb = [0],
      sb = [0];
    for (let i = 1; i < t.n; i++) {
      const s = t.self[i],
        b = t.sb[i];
      if (!s && !b) continue;
      tot[0] += s;
      tb[0] += b;
      let cur = 0;
      for (let j = i; j > 0; j = t.parent[j]) {
        let c = kids[cur].get(t.name[j]);
        if (c === undefined) {
          c = rn.length;
          kids[cur].set(t.name[j], c);
          kids.push(new Map());
          rn.push(t.name[j]);
          tot.push(0);
          slf.push(0);
          tb.push(0);
          sb.push(0);
        }
        tot[c] += s;
        tb[c] += b;
        cur = c;
      }
      slf[cur] += s;
      sb[cur] += b;
    }
    const order = [],
      depth = [],
      st = [[0, 0]];
    const byNameDesc = (a, b) =>
      names[rn[a]] < names[rn[b]] ? 1 : names[rn[a]] > names[rn[b]] ? -1 : 0;
    while (st.length) {
      const [v, d] = st.pop();
      order.push(v);
      depth.push(d);
      for (const c of [...kids[v].values()].sort(byNameDesc)) st.push([c, d + 1]);
    }
    const r = newTree(order.length);
    order.forEach((v, i) => {
      r.name[i] = rn[v];
      r.depth[i] = depth[i];
      r.total[i] = tot[v];
      r.self[i] = slf[v];
      r.tb[i] = tb[v];
      r.sb[i] = sb[v];
    });
    return finish(r);
  }
  /* The root's children that are threads, largest first. */
  function threadsOf(t, isThread) {
    const threads = [];
    for (let c = 1; c < t.n; c = t.end[c]) if (isThread(t.name[c])) threads.push(c);
    return threads.sort((a, b) => t.total[b] - t.total[a] || a - b);
  }
  /* "[name tid=N]" -> { name, tid }, or null */
  function threadLabel(name) {
    const m = /^\[(.*) tid=(\d+)\]$/.exec(name);
    return m ? { name: m[1], tid: m[2] } : null;
  }

  /* ---- diff ----
   * "larger" widths: each frame as wide as the larger of its two selves plus its children, so
   * that frames only in one profile fit beside the others. */
  function largerWidths(t) {
    const w = new Float64Array(t.n);
    for (let i = t.n - 1; i >= 0; i--) {
      w[i] += Math.max(t.self[i], t.sb[i]);
      if (t.parent[i] >= 0) w[t.parent[i]] += w[i];
    }
    return w;
  }
  /* a frame's change: its share of the new total minus its share of the base's */
  const change = (t, i, total, totalBase) =>
    (total ? t.total[i] / total : 0) - (totalBase ? t.tb[i] / totalBase : 0);
  /* the largest |change| of any frame but the root: the colour scale */
  function diffScale(t, total, totalBase) {
    let s = 0;
    for (let i = 1; i < t.n; i++) s = Math.max(s, Math.abs(change(t, i, total, totalBase)));
    return s;
  }
  /* red where a frame grew, blue where it shrank, stronger the nearer the largest change */
  function diffColour(d, scale) {
    const mag = Math.min(1, Math.abs(d) / (scale || 1));
    if (Math.abs(d) < 1e-12) return "hsl(45,10%,72%)";
    return d > 0
      ? `hsl(0,${40 + 40 * mag}%,${80 - 25 * mag}%)`
      : `hsl(220,${40 + 40 * mag}%,${80 - 22 * mag}%)`;
  }

  /* ---- layout ----
   * The frames wide enough to draw when node z spans `width` px under widths w: a flat list
   * of (node, x, width px), ancestors of z first (they span the whole width), and the deepest
   * depth drawn. Frames narrower than minPx are left out with their subtrees. */
  function layout(t, w, z, width, minPx) {
    const zw = w[z] || 1,
      scale = width / zw,
      boxes = [];
    let deepest = 0;
    for (let a = t.parent[z]; a >= 0; a = t.parent[a]) boxes.push(a, 0, width);
    const stack = [],
      cur = []; /* cur[k]: where the next child of stack[k] starts */
    for (let i = z; i < t.end[z];) {
      while (stack.length && t.end[stack[stack.length - 1]] <= i) {
        stack.pop();
        cur.pop();
      }
      const x = stack.length ? cur[cur.length - 1] : 0,
        pw = w[i] * scale;
      if (stack.length) cur[cur.length - 1] += pw;
      if (pw < minPx) {
        i = t.end[i]; /* too narrow to see: skip its subtree */
        continue;
      }
      boxes.push(i, x, pw);
      if (t.depth[i] > deepest) deepest = t.depth[i];
      stack.push(i);
      cur.push(x);
      i++;
    }
    return { boxes, deepest };
  }
  /* s cut to about px pixels of 6.6 px characters, ".." marking the cut */
  function fit(s, px) {
    const n = Math.floor(px / 6.6);
    return s.length <= n ? s : n < 3 ? "" : s.slice(0, n - 2) + "..";
  }

  /* ---- search ----
   * Frames whose name (shown or full) matches: every match (node ids, widest first), a flag
   * per node, and the width they cover — a match inside a matched frame is not counted
   * twice. */
  function searchTree(t, hit, w) {
    const matchSet = new Uint8Array(t.n),
      matches = [];
    let sum = 0;
    for (let i = 1; i < t.n;) {
      if (hit[t.name[i]]) {
        sum += w[i];
        for (let j = i; j < t.end[i]; j++)
          if (hit[t.name[j]]) {
            matchSet[j] = 1;
            matches.push(j);
          }
        i = t.end[i];
      } else i++;
    }
    matches.sort((a, b) => w[b] - w[a]);
    return { matchSet, matches, sum };
  }
  /* a regex source that matches exactly s */
  const exactly = (s) => "^" + s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";

  /* ---- function table: one row per method ----
   * A method is a name without its kind suffix: Foo.bar_[j], Foo.bar_[i] and Foo.bar_[0] are
   * one row. Its total counts every stack holding it once (however often, under whatever
   * kinds, it appears there); its self adds up the samples in its own code. The row's bar
   * splits the total by kind: each stack goes to the kind of the method's frame nearest the
   * sample, so the parts add up to the total and, for the self samples, are the kinds that
   * ran them. */
  function methodsOf(shown) {
    const methodOf = new Int32Array(shown.length),
      methods = [],
      ids = new Map();
    shown.forEach((s, k) => {
      let m = ids.get(s);
      if (m === undefined) {
        m = methods.length;
        ids.set(s, m);
        methods.push(s);
      }
      methodOf[k] = m;
    });
    return { methodOf, methods };
  }
  /* rows (method, name, self, total) of the methods with samples, and byKind: per method NK
   * columns (kindCol of each name's kind). */
  function functionRows(t, methodOf, methods, kindCol, NK) {
    const M = methods.length,
      self = new Float64Array(M),
      total = new Float64Array(M),
      byKind = new Float64Array(M * NK);
    const open = new Int32Array(M).fill(-1),
      outer = new Int32Array(t.n),
      path = [];
    for (let i = 1; i < t.n; i++) {
      while (path.length && t.end[path[path.length - 1]] <= i) {
        const j = path.pop();
        open[methodOf[t.name[j]]] = outer[j];
      }
      const nm = t.name[i],
        m = methodOf[nm],
        a = open[m],
        tt = t.total[i];
      self[m] += t.self[i];
      if (a < 0) total[m] += tt; /* recursion counted once */
      else byKind[m * NK + kindCol[t.name[a]]] -= tt; /* nearer the sample: this frame's kind */
      byKind[m * NK + kindCol[nm]] += tt;
      outer[i] = a;
      open[m] = i;
      path.push(i);
    }
    const rows = [];
    for (let m = 0; m < M; m++)
      if (total[m] > 0) rows.push({ m, name: methods[m], self: self[m], total: total[m] });
    return { rows, byKind };
  }
  /* A method's total by kind: [[column, samples], ...] in column order, non-zero only. */
  function partsOf(byKind, m, NK) {
    const parts = [];
    for (let k = 0; k < NK; k++) if (byKind[m * NK + k] > 0) parts.push([k, byKind[m * NK + k]]);
    return parts;
  }
  /* Sorts rows by key (name, self, total; selfp and totalp as self and total), dir 1
   * ascending, -1 descending; equal numbers keep method order. */
  function sortRows(rows, sortKey, dir) {
    const key = sortKey === "selfp" ? "self" : sortKey === "totalp" ? "total" : sortKey;
    if (key === "name") rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) * dir);
    else rows.sort((a, b) => (b[key] - a[key]) * -dir || a.m - b.m);
    return rows;
  }
  /* Method m's callers and callees with their samples, largest first (at most 200 each);
   * a caller of a root child is "(root)". */
  function relativesOf(t, m, methodOf, methods) {
    const callers = new Map(),
      callees = new Map();
    for (let i = 1; i < t.n; i++)
      if (methodOf[t.name[i]] === m) {
        const p = t.parent[i],
          pn = p > 0 ? methods[methodOf[t.name[p]]] : "(root)";
        callers.set(pn, (callers.get(pn) || 0) + t.total[i]);
        for (let c = i + 1; c < t.end[i]; c = t.end[c]) {
          const cn = methods[methodOf[t.name[c]]];
          callees.set(cn, (callees.get(cn) || 0) + t.total[c]);
        }
      }
    const top = (mp) => [...mp].sort((a, b) => b[1] - a[1]).slice(0, 200);
    return { callers: top(callers), callees: top(callees) };
  }

  /* ---- the time axis (FG_DATA.time, from the agent) ----
   * Entries (cell, stack, thread, weight) by cell, packed (the writer's) or as an array; a stack is a page node, or -(k+1) when its
   * frames were pruned below node k (their weight is in k's total, not its self). */
  function timeOf(D) {
    const T = D.time;
    if (!T) return null;
    const n = T.packed !== undefined ? T.n : T.entries.length / 4,
      cell = new Int32Array(n),
      stack = new Int32Array(n),
      thread = new Int32Array(n),
      weight = new Float64Array(n);
    if (T.packed !== undefined) {
      /* base64 of LEB128 numbers, four an entry: the cell (from the entry before's), the stack
         (from the entry before's in the same cell), the thread, the weight */
      const bin = atob(T.packed),
        bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      let p = 0;
      const num = () => {
        let x = 0,
          mul = 1,
          b;
        do {
          b = bytes[p++];
          x += (b & 127) * mul;
          mul *= 128;
        } while (b & 128 && p < bytes.length);
        return x;
      };
      for (let i = 0, c = 0; i < n; i++) {
        const dc = num(),
          ds = num();
        c += dc;
        cell[i] = c;
        stack[i] = i && !dc ? stack[i - 1] + ds : ds;
        thread[i] = num();
        weight[i] = num();
      }
    } else {
      for (let i = 0, o = 0; i < n; i++, o += 4) {
        cell[i] = T.entries[o];
        stack[i] = T.entries[o + 1];
        thread[i] = T.entries[o + 2];
        weight[i] = T.entries[o + 3];
      }
    }
    const last = n ? cell[n - 1] + 1 : 0;
    return {
      n,
      cell,
      stack,
      thread,
      weight,
      stacks: Int32Array.from(T.stacks),
      threads: T.threads,
      startMs: T.startMs,
      cellNs: T.cellNs,
      merged: T.merged || 1,
      ncells: Math.max(last, Math.ceil(T.durationNs / T.cellNs), 1),
      marks: (T.marks || []).map(([at, dur, what]) => ({ at, dur, what })),
      marksLost: T.marksLost || 0,
    };
  }
  /* the first entry at or after cell c (entries are by cell) */
  function firstAt(tm, c) {
    let lo = 0,
      hi = tm.n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tm.cell[mid] < c) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  /* Per node of t (the page's tree): the weight of cells [c0, c1) of one time thread (th >= 0)
   * or all (-1): { total, self, sum }. */
  function rangeWeights(t, tm, c0, c1, th) {
    const total = new Float64Array(t.n),
      self = new Float64Array(t.n);
    let sum = 0;
    for (let i = firstAt(tm, c0); i < tm.n && tm.cell[i] < c1; i++) {
      if (th >= 0 && tm.thread[i] !== th) continue;
      const s = tm.stacks[tm.stack[i]],
        w = tm.weight[i];
      if (s >= 0) {
        self[s] += w;
        total[s] += w;
      } else total[-s - 1] += w;
      sum += w;
    }
    for (let i = t.n - 1; i > 0; i--) total[t.parent[i]] += total[i];
    return { total, self, sum };
  }
  /* t's frames with the weights of a range (ranges = [[c0, c1]]), or the differential of two
   * (ranges = [[a0, a1], [b0, b1]]: the second as the new profile, the first as its base), of
   * one time thread or all (th -1). The same nodes as t, so zoom and thread stay valid. */
  function rangeTree(t, tm, ranges, th) {
    const r = newTree(t.n);
    r.name.set(t.name);
    r.depth.set(t.depth);
    const main = ranges[ranges.length - 1],
      m = rangeWeights(t, tm, main[0], main[1], th);
    r.total.set(m.total);
    r.self.set(m.self);
    if (ranges.length > 1) {
      const b = rangeWeights(t, tm, ranges[0][0], ranges[0][1], th);
      r.tb.set(b.total);
      r.sb.set(b.self);
    }
    return finish(r);
  }
  /* Each time thread's weight, indexed like tm.threads. */
  function timeThreadWeights(tm) {
    const w = new Float64Array(tm.threads.length);
    for (let i = 0; i < tm.n; i++) w[tm.thread[i]] += tm.weight[i];
    return w;
  }
  /* The time thread of a tid (as a string or number), or -1. */
  function timeThreadOf(tm, tid) {
    for (let k = 0; k < tm.threads.length; k++)
      if (String(tm.threads[k][0]) === String(tid)) return k;
    return -1;
  }

  /* ---- the heat map ----
   * Columns of time, FlameScope-style: each column `rows` boxes of `box` cells from top to
   * bottom (20 ms cells: 1 s a column), boxes as wide as fit: the smallest box of 1, 2, 5, 10,
   * 20, 50 ... cells that puts the view's cells in columns of at least minColPx. */
  function heatLayout(v0, v1, widthPx, minColPx) {
    const cells = Math.max(1, v1 - v0),
      rows = Math.min(50, cells),
      maxCols = Math.max(1, Math.floor(widthPx / minColPx));
    let box = 1;
    for (let k = 0; Math.ceil(cells / (box * rows)) > maxCols; k++)
      box = [1, 2, 5][(k + 1) % 3] * 10 ** Math.floor((k + 1) / 3);
    return { v0, v1, rows, box, cols: Math.ceil(cells / (box * rows)) };
  }
  /* The weight of every box of layout hl (column-major: values[col * rows + row]) for one time
   * thread or all (-1), and the largest. */
  function heatValues(tm, hl, th) {
    const values = new Float64Array(hl.cols * hl.rows);
    let max = 0;
    for (let i = firstAt(tm, hl.v0); i < tm.n && tm.cell[i] < hl.v1; i++) {
      if (th >= 0 && tm.thread[i] !== th) continue;
      const k = Math.floor((tm.cell[i] - hl.v0) / hl.box);
      values[k] += tm.weight[i];
      if (values[k] > max) max = values[k];
    }
    return { values, max };
  }
  /* The marks (GC pauses, profiles written) in each box of layout hl: per box (column-major, as
   * heatValues) null or {name: {n, ns}} — how many marks of that name touch the box, and their
   * time within it. */
  function markBoxes(tm, hl) {
    const boxes = new Array(hl.cols * hl.rows).fill(null),
      cellNs = tm.cellNs,
      t0 = hl.v0 * cellNs,
      t1 = hl.v1 * cellNs;
    for (const m of tm.marks) {
      const a = Math.max(m.at, t0),
        b = Math.min(m.at + m.dur, t1 - 1);
      if (b < a) continue;
      const k0 = Math.floor((Math.floor(a / cellNs) - hl.v0) / hl.box),
        k1 = Math.floor((Math.floor(b / cellNs) - hl.v0) / hl.box);
      for (let k = k0; k <= k1; k++) {
        const c = boxCells(hl, k),
          ns = Math.min(b, c[1] * cellNs) - Math.max(a, c[0] * cellNs),
          box = boxes[k] || (boxes[k] = {}),
          e = box[m.what] || (box[m.what] = { n: 0, ns: 0 });
        e.n++;
        e.ns += Math.max(0, ns);
      }
    }
    return boxes;
  }
  /* Per name of mark: how many, and their time in all (ms). */
  function markTotals(tm) {
    const out = {};
    for (const m of tm.marks) {
      const e = out[m.what] || (out[m.what] = { n: 0, ms: 0 });
      e.n++;
      e.ms += m.dur / 1e6;
    }
    return out;
  }
  /* The cells [c0, c1) of box k of layout hl, within the view. */
  function boxCells(hl, k) {
    const c0 = hl.v0 + k * hl.box;
    return [c0, Math.min(c0 + hl.box, hl.v1)];
  }
  /* The range from box a to box b (either order), both included. */
  function boxRange(hl, a, b) {
    const x = boxCells(hl, Math.min(a, b)),
      y = boxCells(hl, Math.max(a, b));
    return [x[0], Math.max(x[0] + 1, y[1])];
  }
  /* A box's colour: empty boxes the background (null), then from pale yellow to dark red by
   * the share of the largest box (a square root, so the quiet boxes still show). About 50
   * colours in all, each string made once: a heat map has ~15,000 boxes. */
  const HEAT_COLOURS = new Map();
  function heatColour(v, max) {
    if (!(v > 0)) return null;
    const f = Math.sqrt(v / (max || 1)),
      h = Math.round(50 - 50 * f),
      l = Math.round(88 - 50 * f),
      key = h * 1024 + l;
    let c = HEAT_COLOURS.get(key);
    if (c === undefined) HEAT_COLOURS.set(key, (c = `hsl(${h},90%,${l}%)`));
    return c;
  }
  /* The boxes of layout hl holding cells (the last column may hold fewer than rows). */
  const heatBoxes = (hl) => Math.ceil((hl.v1 - hl.v0) / hl.box);
  /* The boxes of layout hl that touch cells r = [c0, c1): [k0, k1), or null when none. */
  function rangeBoxes(hl, r) {
    if (!r || r[0] >= hl.v1 || r[1] <= hl.v0 || r[0] >= r[1]) return null;
    return [
      Math.max(0, Math.floor((r[0] - hl.v0) / hl.box)),
      Math.min(heatBoxes(hl), Math.floor((r[1] - 1 - hl.v0) / hl.box) + 1),
    ];
  }
  /* The boxes of layout hl that touch none of the ranges (null ones ignored): [[k0, k1], ...]
   * in order. */
  function boxesOutside(hl, ranges) {
    const inside = ranges
        .map((r) => rangeBoxes(hl, r))
        .filter((b) => b)
        .sort((a, b) => a[0] - b[0]),
      out = [];
    let k = 0;
    for (const [a, b] of inside) {
      if (a > k) out.push([k, a]);
      k = Math.max(k, b);
    }
    if (k < heatBoxes(hl)) out.push([k, heatBoxes(hl)]);
    return out;
  }
  /* Boxes [k0, k1) of layout hl (column-major) as at most three rectangles of whole boxes —
   * the rest of a column, whole columns, the start of one: [[col, row, cols, rows], ...]. */
  function boxRects(hl, k0, k1) {
    const R = hl.rows,
      out = [];
    let k = k0;
    if (k < k1 && k % R) {
      const e = Math.min(k1, (Math.floor(k / R) + 1) * R);
      out.push([Math.floor(k / R), k % R, 1, e - k]);
      k = e;
    }
    if (k1 - k >= R) {
      const cols = Math.floor((k1 - k) / R);
      out.push([k / R, 0, cols, R]);
      k += cols * R;
    }
    if (k < k1) out.push([k / R, 0, 1, k1 - k]);
    return out;
  }
  /* Seconds from the profile's start at cell c, and the wall-clock time (local, ms). */
  const secondsAt = (tm, c) => (c * tm.cellNs) / 1e9;
  function clockAt(tm, c) {
    const d = new Date(tm.startMs + (c * tm.cellNs) / 1e6),
      two = (x) => String(x).padStart(2, "0");
    return (
      `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.` +
      String(d.getMilliseconds()).padStart(3, "0")
    );
  }
  /* "12.34 s – 15 s" (seconds from the start, as precise as a cell needs) */
  function rangeText(tm, r) {
    const dec = tm.cellNs >= 1e9 ? 0 : tm.cellNs >= 1e8 ? 1 : tm.cellNs >= 1e7 ? 2 : 3;
    const s = (c) => +secondsAt(tm, c).toFixed(dec) + " s";
    return `${s(r[0])} – ${s(r[1])}`;
  }
  /* "a-b" for a range (URL), and back (null when not one) */
  const rangeParam = (r) => (r ? `${r[0]}-${r[1]}` : "");
  function parseRange(s) {
    const m = /^(\d+)-(\d+)$/.exec(s || "");
    return m && +m[1] < +m[2] ? [+m[1], +m[2]] : null;
  }

  /* ---- text ---- */
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
  const esc = (s) => s.replace(/[&<>"]/g, (c) => ESC[c]);

  /* ---- the view's state in the URL fragment ----
   * e event (a page of several), t thread name, s search, z zoomed node, r reversed, i icicle,
   * w width mode (diff); the time
   * axis: a range of cells (h), a second range (h2, the differential against h), the heat
   * map's view (hv). */
  function encodeState(st, threadName) {
    const p = new URLSearchParams();
    if (st.event) p.set("e", st.event);
    if (threadName !== null) p.set("t", threadName);
    if (st.range) p.set("h", rangeParam(st.range));
    if (st.range && st.range2) p.set("h2", rangeParam(st.range2));
    if (st.view) p.set("hv", rangeParam(st.view));
    if (st.src) p.set("s", st.src);
    if (st.zoom) p.set("z", st.zoom);
    if (st.reverse) p.set("r", "1");
    if (st.icicle) p.set("i", "1");
    if (st.widthMode) p.set("w", st.widthMode);
    return p.toString();
  }
  function decodeState(fragment) {
    const p = new URLSearchParams(fragment);
    return {
      event: p.get("e") || "",
      thread: p.get("t") || "",
      src: p.get("s") || "",
      zoom: +(p.get("z") || 0),
      reverse: p.get("r") === "1",
      icicle: p.get("i") === "1",
      widthMode: +(p.get("w") || 0) % 3,
      range: parseRange(p.get("h")),
      range2: parseRange(p.get("h") ? p.get("h2") : ""),
      view: parseRange(p.get("hv")),
    };
  }

  return {
    fmt,
    pct,
    hash,
    rgbOf,
    nameColour,
    shownName,
    hasJavaKinds,
    kindLabel,
    keyLabel,
    kindOrder,
    fromData,
    finish,
    threadOf,
    reversedOf,
    threadsOf,
    threadLabel,
    largerWidths,
    change,
    diffScale,
    diffColour,
    layout,
    fit,
    searchTree,
    exactly,
    methodsOf,
    functionRows,
    partsOf,
    sortRows,
    relativesOf,
    timeOf,
    rangeWeights,
    rangeTree,
    timeThreadWeights,
    timeThreadOf,
    heatLayout,
    heatValues,
    markBoxes,
    markTotals,
    boxCells,
    boxRange,
    heatColour,
    heatBoxes,
    rangeBoxes,
    boxesOutside,
    boxRects,
    secondsAt,
    clockAt,
    rangeText,
    esc,
    encodeState,
    decodeState,
  };
})();

if (typeof module === "object" && module.exports) module.exports = fgModel;

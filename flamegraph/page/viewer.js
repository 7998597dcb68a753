/*
 * viewer.js — the flame graph page's DOM side: draws the canvas, the legend, the function
 * table and the callers/callees from FG_DATA with model.js's functions (fgModel, pasted before
 * this file by page/assemble.cmake), and handles the controls, keys and URL fragment.
 * Test hooks: window.fgView (search, zoom, state) and data-* attributes on the controls.
 */
/* global FG_DATA, FG_EVENTS, fgModel */
(function (D, M) {
  "use strict";
  const names = D.names;
  const $ = (id) => document.getElementById(id);
  const { fmt, pct, esc } = M;
  const cnt = D.countName || "samples";
  /* the tables' headers say the unit (samples, ns, bytes) */
  for (const th of document.querySelectorAll("#ftable th.num, #rtable th.num"))
    th.textContent = th.textContent.replace("Samples", cnt[0].toUpperCase() + cnt.slice(1));
  for (const k of ["self", "total"]) {
    const th = document.querySelector(`#ftable th[data-k="${k}"]`);
    if (th) th.textContent += ` (${cnt})`;
  }

  /* ---- frame kinds and colours (the data's palette) ---- */
  const P = D.palette,
    KIND = P.kinds;
  const kindOfName = D.nameKinds.map((k) => KIND[k]);
  const shown = names.map((n, k) => M.shownName(n, kindOfName[k]));
  const hasKinds = M.hasJavaKinds(kindOfName.map((k) => k.id));
  const colours = new Array(names.length);
  const colour = (k) => colours[k] || (colours[k] = M.nameColour(kindOfName[k], names[k]));
  const byId = (id) => KIND.find((k) => k.id === id);
  const ROOT_COLOUR = M.rgbOf(byId("thread"), 0.5);
  const { order: KIND_ORDER, col: KIND_COL } = M.kindOrder(P);
  const NK = KIND_ORDER.length,
    kindCol = D.nameKinds.map((k) => KIND_COL[k]);
  const legend = $("legend");
  /* the legend: the diff colours when a diff is shown, else one key per kind present */
  function renderLegend() {
    legend.innerHTML = "";
    if (isDiff()) {
      legend.innerHTML =
        '<span><i style="background:hsl(0,75%,60%)"></i>grew</span>' +
        '<span><i style="background:hsl(220,75%,62%)"></i>shrank</span>' +
        '<span><i style="background:hsl(45,10%,70%)"></i>same</span>' +
        '<span><i style="background:repeating-linear-gradient(45deg,#888 0 2px,transparent 2px 4px)">' +
        "</i>new / removed (outlined)</span>";
      return;
    }
    const present = new Set(D.nameKinds);
    for (const key of P.legend) {
      if (!key.kinds.some((k) => present.has(k))) continue;
      const e = document.createElement("span"),
        sw = document.createElement("i");
      e.className = "key";
      e.dataset.kind = key.id;
      e.title = key.help;
      sw.style.background = M.rgbOf(KIND[key.kinds[0]], 0.5);
      e.append(sw, M.keyLabel(key, hasKinds));
      legend.appendChild(e);
    }
  }

  /* ---- the trees ----
   * F: the profile or the chosen thread, callers first — of the range chosen on the time axis,
   * or the differential of two ranges; T: what is drawn (F, or F reversed). The function table
   * and the callers/callees always come from F. */
  const normal = M.fromData(D);
  const TM = M.timeOf(D); /* the time axis, or null */
  let F = normal,
    T = normal,
    reversed = null;
  const threads = M.threadsOf(normal, (nm) => kindOfName[nm].id === "thread");

  /* ---- view state ---- */
  const st = {
    event: "" /* a page of several events: the one shown (kept in the fragment's e=) */,
    zoom: 0,
    re: null,
    src: "",
    reverse: false,
    icicle: false,
    widthMode: 0,
    thread: -1 /* the chosen thread's root frame, or -1 */,
    tthread: -1 /* the chosen thread on the time axis, or -1 */,
    range: null /* cells [c0, c1) of the time axis, or null: the whole run */,
    range2: null /* a second range: the differential of range2 against range */,
    view: null /* the heat map's cells, null: the whole run */,
    matches: [],
    mi: -1,
    sel: -1,
  };
  let maxw = null;
  /* a diff is shown: the profile is one, or two ranges of the time axis are chosen */
  const isDiff = () => D.diff || !!(st.range && st.range2);
  /* the new and base totals a diff's shares are of: the profile's, or the two ranges' */
  const diffTotals = () => (D.diff ? [D.total, D.totalBase] : [F.total[0], F.tb[0]]);
  const W = () =>
    isDiff() && st.widthMode === 1 ? T.tb : isDiff() && st.widthMode === 2 ? maxw : T.total;
  const WIDTH_NAMES = ["new", "base", "larger"];
  function widths() {
    if (isDiff()) maxw = M.largerWidths(T);
  }

  /* ---- what a redraw reads of the page, kept: reading a size or a computed style after the
   * tables changed makes the browser lay the page out there and then (tens of ms with the
   * function table), and again at the frame ---- */
  /* The CSS variable name's value (a colour) in the current theme. */
  let cssOf = { dark: null, values: {} };
  function cssVar(name) {
    const dark = document.documentElement.classList.contains("dark");
    if (cssOf.dark !== dark) cssOf = { dark, values: {} };
    const v = cssOf.values;
    if (!(name in v)) v[name] = getComputedStyle(document.documentElement).getPropertyValue(name);
    return v[name];
  }
  /* The width the graph and the heat map are drawn at (their boxes' content width): measured
   * at the start and whenever the graph's box changes width (a resize, a scroll bar). */
  let drawWidth = $("graph").clientWidth - 32;
  /* Sizes canvas c (2D context x) to width x height CSS px at the screen's pixel ratio — a new
   * bitmap only when the size changed — and fills it with the colour of CSS variable bg
   * (none: left as it is, to be covered); returns the pixel ratio. */
  function paintable(c, x, width, height, bg) {
    const dpr = window.devicePixelRatio || 1,
      w = Math.trunc(width * dpr),
      h = Math.trunc(height * dpr);
    if (c.width !== w || c.height !== h) {
      c.width = w;
      c.height = h;
      c.style.height = height + "px";
    }
    x.setTransform(dpr, 0, 0, dpr, 0, 0);
    x.globalAlpha = 1;
    if (bg) {
      x.fillStyle = cssVar(bg);
      x.fillRect(0, 0, width, height);
    }
    return dpr;
  }

  /* Frames narrower than MIN_PX are not drawn, nor their subtrees: below a pixel a frame is a
   * faint sliver (it is drawn 0.5 px narrower, for the gap), and a deep stack of them would
   * only make the canvas tall. Clicking a wider ancestor shows them. */
  const cv = $("cv"),
    ctx = cv.getContext("2d"),
    FH = 17,
    MIN_PX = 1;
  let rects = []; /* drawn frames: x, y, w, node */
  let diffScale = D.diff ? M.diffScale(normal, D.total, D.totalBase) : 0;
  /* Lays out the frames wide enough to draw at the current zoom, then sizes the canvas for the
   * deepest of them (not for the deepest frame in the data: a deep but thin stack would leave
   * an empty band above the flames) and paints. */
  function draw() {
    const width = drawWidth;
    const { boxes, deepest } = M.layout(T, W(), st.zoom, width, MIN_PX);
    const height = (deepest + 1) * FH + 4;
    paintable(cv, ctx, width, height, "--bg");
    ctx.font = "12px system-ui,-apple-system,'Segoe UI',Roboto,sans-serif";
    ctx.textBaseline = "middle";
    const yOf = (d) => (st.icicle ? d * FH + 2 : height - (d + 1) * FH - 2);
    const matched = st.re ? matchSet : null,
      hi = cssVar("--hi"),
      diff = isDiff(),
      [dt, dtb] = diffTotals();
    rects = [];
    for (let k = 0; k < boxes.length; k += 3) {
      const i = boxes[k],
        x = boxes[k + 1],
        pw = boxes[k + 2],
        y = yOf(T.depth[i]);
      ctx.fillStyle =
        matched && matched[i]
          ? hi
          : i === 0
            ? ROOT_COLOUR
            : diff
              ? M.diffColour(M.change(T, i, dt, dtb), diffScale)
              : colour(T.name[i]);
      ctx.fillRect(x, y, Math.max(pw - 0.5, 0.5), FH - 1);
      if (diff && i && (T.total[i] === 0 || T.tb[i] === 0)) {
        ctx.strokeStyle = T.total[i] === 0 ? "#2f6fdf" : "#d23";
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x + 0.75, y + 0.75, Math.max(pw - 2, 0.5), FH - 2.5);
      }
      if (pw > 28) {
        ctx.fillStyle = "#111";
        const label = i === 0 ? "all" : shown[T.name[i]];
        ctx.fillText(M.fit(label, pw - 6), x + 3, y + FH / 2);
      }
      rects.push(x, y, pw, i);
    }
  }

  /* ---- search ---- */
  let matchSet = null;
  function search(src) {
    st.src = src;
    st.re = null;
    matchSet = null;
    st.matches = [];
    st.mi = -1;
    if (src) {
      try {
        st.re = new RegExp(src);
      } catch {
        $("matched").textContent = "invalid regex";
        draw();
        return;
      }
    }
    let sum = 0;
    if (st.re) {
      const hit = names.map((n, k) => st.re.test(shown[k]) || st.re.test(n));
      const r = M.searchTree(T, hit, W());
      matchSet = r.matchSet;
      st.matches = r.matches;
      sum = r.sum;
    }
    const tot = W()[0];
    $("matched").textContent = st.re ? `Matched: ${pct(sum, tot)} (${fmt(sum)} ${cnt})` : "";
    $("matched").dataset.percent = st.re ? ((100 * sum) / (tot || 1)).toFixed(2) : "";
    saveState();
    draw();
  }
  function step(dir) {
    if (!st.matches.length) return;
    st.mi = (st.mi + dir + st.matches.length) % st.matches.length;
    const m = st.matches[st.mi];
    zoom(T.parent[m] >= 0 ? T.parent[m] : 0);
    details(m);
  }

  /* ---- zoom, hover, details ---- */
  function zoom(i) {
    st.zoom = i;
    saveState();
    draw();
  }
  function at(mx, my) {
    for (let k = rects.length - 4; k >= 0; k -= 4)
      if (
        mx >= rects[k] &&
        mx < rects[k] + rects[k + 2] &&
        my >= rects[k + 1] &&
        my < rects[k + 1] + FH
      )
        return rects[k + 3];
    return -1;
  }
  /* Percentages are of what is shown: the whole profile, or the chosen thread. */
  function describe(i) {
    const all = F.total[0],
      allBase = F.tb[0];
    const name = i === 0 ? "all" : shown[T.name[i]];
    let s =
      `<b>${esc(name)}</b><br>${fmt(T.total[i])} ${esc(cnt)} (${pct(T.total[i], all)}), ` +
      `self ${fmt(T.self[i])} (${pct(T.self[i], all)})`;
    if (i) s += `<br>kind: ${M.kindLabel(kindOfName[T.name[i]], hasKinds)}`;
    if (isDiff())
      s +=
        `<br>base ${fmt(T.tb[i])} (${pct(T.tb[i], allBase)}), self ${fmt(T.sb[i])}` +
        (T.tb[i] === 0 ? " — new" : T.total[i] === 0 ? " — removed" : "");
    return s;
  }
  function details(i) {
    $("details").innerHTML = i >= 0 ? describe(i).replace(/<br>/g, " · ") : "";
  }
  const tip = $("tip");
  cv.addEventListener("mousemove", (e) => {
    const r = cv.getBoundingClientRect(),
      i = at(e.clientX - r.left, e.clientY - r.top);
    if (i < 0) {
      tip.style.display = "none";
      return;
    }
    tip.innerHTML = describe(i);
    tip.style.display = "block";
    tip.style.left = Math.min(e.clientX + 14, innerWidth - tip.offsetWidth - 8) + "px";
    tip.style.top = e.clientY + 16 + "px";
  });
  cv.addEventListener("mouseleave", () => {
    tip.style.display = "none";
  });
  cv.addEventListener("click", (e) => {
    const r = cv.getBoundingClientRect(),
      i = at(e.clientX - r.left, e.clientY - r.top);
    if (i >= 0) {
      zoom(i);
      details(i);
    }
  });

  /* ---- function table ---- */
  const { methodOf, methods } = M.methodsOf(shown);
  let frows = [],
    kindTotals = null;
  function functions() {
    const r = M.functionRows(F, methodOf, methods, kindCol, NK);
    frows = r.rows;
    kindTotals = r.byKind;
  }
  /* a method's total by kind: [[kind, samples], ...] in legend order */
  const partsOf = (m) => M.partsOf(kindTotals, m, NK).map(([c, v]) => [KIND[KIND_ORDER[c]], v]);
  let sortKey = "self",
    sortDir = -1;
  const ROWS = 500;
  function kindBar(r, parts) {
    const title = parts
      .map(([k, v]) => `${M.kindLabel(k, hasKinds)} ${fmt(v)} (${pct(v, r.total)})`)
      .join(" · ");
    const bar = parts
      .map(
        ([k, v]) =>
          `<i style="width:${((100 * v) / r.total).toFixed(1)}%;background:${M.rgbOf(k, 0.5)}"></i>`,
      )
      .join("");
    return `<span class="kinds" title="${esc(title)} of its total, by the kind of its frame nearest the sample">${bar}</span>`;
  }
  function renderTable() {
    M.sortRows(frows, sortKey, sortDir);
    const tot = F.total[0],
      body = $("ftable").tBodies[0],
      html = [];
    if (frows.length > ROWS)
      html.push(
        `<tr><td colspan="5">top ${ROWS} of ${fmt(frows.length)} functions — search to find any</td></tr>`,
      );
    for (const r of frows.slice(0, ROWS)) {
      const parts = partsOf(r.m),
        ks = parts.map(([k, v]) => k.id + ":" + v).join(",");
      html.push(
        `<tr data-name="${esc(r.name)}" data-self="${r.self}" data-total="${r.total}" data-kinds="${ks}"` +
          `${r.m === st.sel ? ' class="sel"' : ""}><td title="${esc(r.name)}">` +
          `${isDiff() ? "" : kindBar(r, parts)}${esc(r.name)}</td><td class="num">${fmt(r.self)}</td>` +
          `<td class="num">${pct(r.self, tot)}</td><td class="num">${fmt(r.total)}</td>` +
          `<td class="num">${pct(r.total, tot)}</td></tr>`,
      );
    }
    body.innerHTML = html.join("");
  }
  $("ftable").tHead.addEventListener("click", (e) => {
    const k = e.target.dataset.k;
    if (!k) return;
    sortDir = sortKey === k ? -sortDir : k === "name" ? 1 : -1;
    sortKey = k;
    renderTable();
  });
  $("ftable").tBodies[0].addEventListener("click", (e) => {
    const tr = e.target.closest("tr");
    if (!tr || tr.dataset.name === undefined) return;
    const m = methods.indexOf(tr.dataset.name);
    st.sel = m;
    renderTable();
    relatives(m);
    const src = M.exactly(tr.dataset.name);
    $("search").value = src;
    search(src);
  });
  function relatives(m) {
    if (m < 0) {
      $("relhead").textContent = "Callers and callees";
      $("rtable").tBodies[0].innerHTML =
        '<tr><td colspan="2">select a function in the table</td></tr>';
      return;
    }
    const { callers, callees } = M.relativesOf(F, m, methodOf, methods);
    $("relhead").textContent = "Callers and callees of " + methods[m];
    const rows = (list, dir) =>
      list
        .map(
          ([n, v]) =>
            `<tr><td title="${esc(n)}">${dir} ${esc(n)}</td><td class="num">${fmt(v)}</td></tr>`,
        )
        .join("");
    $("rtable").tBodies[0].innerHTML =
      `<tr><td><b>callers</b></td><td></td></tr>` +
      rows(callers, "←") +
      `<tr><td><b>callees</b></td><td></td></tr>` +
      rows(callees, "→");
  }

  /* ---- event selector: a page of several events (FG_EVENTS) shows one, FG_DATA, chosen by
   * the fragment's e=; another is another page's data: the page loads again with it ---- */
  const EVENTS = typeof FG_EVENTS === "undefined" ? [] : FG_EVENTS;
  const evSel = $("event");
  const thisEvent = (EVENTS.find((x) => x.data === D) || { event: "" }).event;
  if (EVENTS.length > 1) {
    evSel.innerHTML = EVENTS.map(
      (x) =>
        `<option value="${esc(x.event)}">${esc(x.event)} (${esc(x.data.countName || "samples")})</option>`,
    ).join("");
    evSel.value = thisEvent;
    evSel.hidden = false;
    st.event = thisEvent;
    evSel.addEventListener("change", () => {
      location.hash = "e=" + encodeURIComponent(evSel.value);
    });
  }

  /* ---- thread selector: the graph, the table and the percentages show one thread ---- */
  const sel = $("thread");
  if (threads.length) {
    const all = D.total || 1;
    sel.innerHTML =
      `<option value="">All threads (${fmt(threads.length)})</option>` +
      threads
        .map((c) => {
          const nm = names[normal.name[c]],
            t = M.threadLabel(nm);
          return `<option value="${esc(nm)}">${esc(t ? `${t.name} (tid ${t.tid})` : nm)} · ${pct(normal.total[c], all)}</option>`;
        })
        .join("");
    sel.hidden = false;
  }
  /* Without thread roots, the time axis's threads (heaviest first): choosing one narrows the
   * time entries, and so the graph, to it. Named "[name tid=N]" as roots are. */
  const tname = (k) => `[${TM.threads[k][1]} tid=${TM.threads[k][0]}]`;
  if (TM && !threads.length && TM.threads.length) {
    const tw = M.timeThreadWeights(TM),
      order = TM.threads.map((_, k) => k).filter((k) => tw[k] > 0),
      all = D.total || 1;
    order.sort((a, b) => tw[b] - tw[a] || a - b);
    sel.innerHTML =
      `<option value="">All threads (${fmt(order.length)})</option>` +
      order
        .map(
          (k) =>
            `<option value="${esc(tname(k))}">${esc(`${TM.threads[k][1]} (tid ${TM.threads[k][0]})`)} · ${pct(tw[k], all)}</option>`,
        )
        .join("");
    sel.hidden = false;
  }
  /* the chosen thread by its "[name tid=N]": its root, and its time thread (-1 when none) */
  function chooseThread(nm) {
    st.thread = nm ? threadByName(nm) : -1;
    const t = nm && TM ? M.threadLabel(nm) : null;
    st.tthread = t ? M.timeThreadOf(TM, t.tid) : -1;
    if (st.thread < 0 && threads.length) st.tthread = -1; /* a root thread the profile lacks */
  }
  const threadName = () =>
    st.thread >= 0 ? names[normal.name[st.thread]] : st.tthread >= 0 ? tname(st.tthread) : null;
  function scope() {
    const e = $("scope");
    e.dataset.total = F.total[0];
    const nm = threadName();
    if (nm === null) {
      e.textContent = "";
      return;
    }
    e.textContent =
      `Thread ${nm.slice(1, -1)}: ${fmt(F.total[0])} of ` +
      `${fmt(D.total)} ${cnt} (${pct(F.total[0], D.total)})`;
  }

  /* ---- the time axis: a heat map of the run (FlameScope's columns of time), ranges ----
   * Click a box or drag across boxes: the graph, the table and the callers show that range;
   * shift+drag a second range: the differential of the second against the first. */
  const hm = $("hm"),
    hctx = hm.getContext("2d"),
    MIN_COL = 4;
  let HL = null,
    heat = null,
    marked = null,
    markedBoxes = [],
    colPx = 0,
    rowPx = 0,
    drag = null,
    heatKey = "",
    heatBase = null;
  const AXIS = 30; /* px under the boxes: seconds, then the wall clock */
  /* The heat map of the view and thread at this width and theme, without ranges: its layout,
   * boxes and marks (HL, heat, marked), and a canvas with the boxes and the time labels. */
  function heatOf(width, v) {
    HL = M.heatLayout(v[0], v[1], width, MIN_COL);
    heat = M.heatValues(TM, HL, st.tthread);
    marked = M.markBoxes(TM, HL);
    markedBoxes = [];
    marked.forEach((mk, k) => mk && markedBoxes.push(k));
    colPx = Math.max(MIN_COL, Math.min(60, Math.floor(width / HL.cols)));
    rowPx = Math.max(3, Math.min(40, Math.floor(200 / HL.rows)));
    const c = heatBase || document.createElement("canvas"),
      x = c.getContext("2d");
    paintable(c, x, width, HL.rows * rowPx + AXIS, "--panel");
    /* the boxes by colour (some 50 colours for ~15,000 boxes): a colour set once */
    const byColour = new Map(),
      n = M.heatBoxes(HL);
    for (let k = 0; k < n; k++) {
      const col = M.heatColour(heat.values[k], heat.max) || cssVar("--bg");
      let ks = byColour.get(col);
      if (!ks) byColour.set(col, (ks = []));
      ks.push(k);
    }
    for (const [col, ks] of byColour) {
      x.fillStyle = col;
      for (const k of ks)
        x.fillRect(Math.floor(k / HL.rows) * colPx, (k % HL.rows) * rowPx, colPx - 1, rowPx - 1);
    }
    /* labels every ~90 px: seconds from the start, and the wall-clock time */
    x.fillStyle = cssVar("--muted");
    x.font = "11px system-ui,-apple-system,'Segoe UI',Roboto,sans-serif";
    x.textBaseline = "top";
    const every = Math.max(1, Math.ceil(90 / colPx)),
      y0 = HL.rows * rowPx + 3;
    for (let col = 0; col < HL.cols; col += every) {
      const cell = HL.v0 + col * HL.rows * HL.box;
      x.fillText(+M.secondsAt(TM, cell).toFixed(3) + " s", col * colPx, y0);
      x.fillText(M.clockAt(TM, cell), col * colPx, y0 + 13);
    }
    return c;
  }
  /* Draws the heat map with the chosen ranges (or, while dragging, the range being dragged):
   * its boxes copied from heatOf's canvas, made again only when the view, the thread, the
   * width or the theme changed; then the boxes outside the ranges faded (a translucent
   * rectangle of the background over each run of them: as if drawn at a quarter of their
   * colour), a bar left of each box in a range, the marks — so choosing a range does not
   * redraw the ~15,000 boxes. */
  function drawHeat(preview) {
    if (!TM) return;
    const width = drawWidth,
      v = st.view || [0, TM.ncells],
      dark = document.documentElement.classList.contains("dark"),
      key = [v[0], v[1], width, st.tthread, window.devicePixelRatio || 1, dark].join();
    if (key !== heatKey) {
      heatBase = heatOf(width, v);
      heatKey = key;
    }
    const dpr = paintable(hm, hctx, width, HL.rows * rowPx + AXIS, null);
    hctx.setTransform(1, 0, 0, 1, 0, 0);
    hctx.drawImage(heatBase, 0, 0);
    hctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const r1 = preview && !preview.second ? preview.r : st.range,
      r2 = preview && preview.second ? preview.r : st.range2;
    /* with a range chosen, the boxes outside it fade */
    if (r1) {
      hctx.globalAlpha = 0.75;
      hctx.fillStyle = cssVar("--panel");
      for (const [a, b] of M.boxesOutside(HL, [r1, r2]))
        for (const [col, row, cols, rows] of M.boxRects(HL, a, b))
          hctx.fillRect(col * colPx, row * rowPx, cols * colPx, rows * rowPx);
      hctx.globalAlpha = 1;
    }
    /* a bar left of each box in a range says which (the first: the accent colour, the
       second: purple) */
    const bar = Math.min(3, colPx / 3);
    for (const [r, col] of [
      [r1, cssVar("--accent")],
      [r2, "#8250df"],
    ]) {
      const b = M.rangeBoxes(HL, r);
      if (!b) continue;
      hctx.fillStyle = col;
      hctx.beginPath();
      for (let k = b[0]; k < b[1]; k++)
        hctx.rect(Math.floor(k / HL.rows) * colPx, (k % HL.rows) * rowPx, bar, rowPx - 1);
      hctx.fill();
    }
    /* marks: a GC pause, a bar along the box's foot; a profile written, a corner */
    hctx.fillStyle = cssVar("--fg");
    for (const k of markedBoxes) {
      const mk = marked[k],
        x = Math.floor(k / HL.rows) * colPx,
        y = (k % HL.rows) * rowPx;
      if (mk["GC pause"]) hctx.fillRect(x, y + rowPx - 3, colPx - 1, 2);
      if (Object.keys(mk).some((w) => w !== "GC pause")) {
        hctx.beginPath();
        hctx.moveTo(x + colPx - 1, y);
        hctx.lineTo(x + colPx - 1 - Math.min(7, colPx - 1), y);
        hctx.lineTo(x + colPx - 1, y + Math.min(7, rowPx - 1));
        hctx.fill();
      }
    }
  }
  function boxAt(mx, my) {
    if (!HL) return -1;
    const col = Math.floor(mx / colPx),
      row = Math.floor(my / rowPx);
    if (col < 0 || row < 0 || col >= HL.cols || row >= HL.rows) return -1;
    const k = col * HL.rows + row;
    return M.boxCells(HL, k)[0] < HL.v1 ? k : -1;
  }
  function rangeInfo() {
    if (!TM) return;
    const e = $("tlrange");
    if (!st.range) {
      e.textContent = `whole run, ${fmt(F.total[0])} ${cnt}`;
      return;
    }
    const one = `${M.rangeText(TM, st.range)}, ${fmt(st.range2 ? F.tb[0] : F.total[0])} ${cnt}`;
    e.textContent = st.range2
      ? `${M.rangeText(TM, st.range2)}, ${fmt(F.total[0])} ${cnt} against ${one} (red: grew)`
      : one;
  }
  /* the graph, the table, the heat map and the link for the chosen range(s) */
  function applyRange() {
    st.zoom = 0;
    setTree();
    search(st.src);
    drawHeat();
  }
  function setRange(r, second) {
    if (second && st.range) st.range2 = r;
    else {
      st.range = r;
      st.range2 = null;
    }
    applyRange();
  }
  const heatXY = (e) => {
    const b = hm.getBoundingClientRect();
    return boxAt(e.clientX - b.left, e.clientY - b.top);
  };
  hm.addEventListener("mousedown", (e) => {
    const k = heatXY(e);
    if (k < 0) return;
    e.preventDefault();
    drag = { a: k, second: e.shiftKey };
  });
  hm.addEventListener("mousemove", (e) => {
    const k = heatXY(e);
    if (drag && k >= 0) drawHeat({ r: M.boxRange(HL, drag.a, k), second: drag.second });
    if (k < 0) {
      tip.style.display = "none";
      return;
    }
    const c = M.boxCells(HL, k),
      mk = marked[k],
      marks = mk
        ? Object.keys(mk)
            .map(
              (w) =>
                `<br>${esc(w)}${mk[w].n > 1 ? " ×" + mk[w].n : ""}` +
                (mk[w].ns ? `, ${+(mk[w].ns / 1e6).toFixed(2)} ms` : ""),
            )
            .join("")
        : "";
    tip.innerHTML =
      `<b>${M.rangeText(TM, c)}</b> (${M.clockAt(TM, c[0])})<br>${fmt(heat.values[k])} ${esc(cnt)}` +
      marks +
      "<br>click or drag: a range; shift+drag: a second range (differential)";
    tip.style.display = "block";
    tip.style.left = Math.min(e.clientX + 14, innerWidth - tip.offsetWidth - 8) + "px";
    tip.style.top = e.clientY + 16 + "px";
  });
  hm.addEventListener("mouseleave", () => {
    tip.style.display = "none";
  });
  addEventListener("mouseup", (e) => {
    if (!drag) return;
    const k = heatXY(e),
      d = drag;
    drag = null;
    if (k < 0) {
      drawHeat();
      return;
    }
    setRange(M.boxRange(HL, d.a, k), d.second);
  });
  /* the heat map's view: zoom to the range(s), out 4 times, back to the whole run */
  function setView(v) {
    st.view = v && (v[0] > 0 || v[1] < TM.ncells) ? v : null;
    saveState();
    drawHeat();
  }
  if (TM) {
    $("timeline").hidden = false;
    const secs = (TM.ncells * TM.cellNs) / 1e9;
    $("tlinfo").textContent =
      `Time: ${+secs.toFixed(2)} s from ${new Date(TM.startMs).toLocaleString()}, boxes of ` +
      `${TM.cellNs / 1e6} ms or more` +
      (TM.merged > 1
        ? ` (${TM.merged} of the profile's cells merged in one: a smaller page)`
        : "") +
      ". Click or drag: a range; shift+drag: a second one, compared." +
      Object.entries(M.markTotals(TM))
        .map(([w, e]) =>
          w === "GC pause"
            ? ` A bar under a box: GC pauses (${fmt(e.n)}, ${+e.ms.toFixed(1)} ms in all).`
            : ` A corner: ${w} (${fmt(e.n)}).`,
        )
        .join("") +
      (TM.marksLost ? ` ${fmt(TM.marksLost)} more marks not kept (the agent keeps 65,536).` : "");
    $("tlall").onclick = () => {
      st.range = st.range2 = st.view = null;
      applyRange();
    };
    $("tlzoom").onclick = () => {
      if (!st.range) return;
      const a = Math.min(st.range[0], st.range2 ? st.range2[0] : Infinity),
        b = Math.max(st.range[1], st.range2 ? st.range2[1] : 0),
        pad = Math.max(1, Math.round((b - a) / 10));
      setView([Math.max(0, a - pad), Math.min(TM.ncells, b + pad)]);
    };
    $("tlout").onclick = () => {
      const v = st.view || [0, TM.ncells],
        w = (v[1] - v[0]) * 4,
        mid = (v[0] + v[1]) / 2,
        a = Math.max(0, Math.round(mid - w / 2));
      setView([a, Math.min(TM.ncells, a + w)]);
    };
  }

  /* ---- toggles, URL state, keys ---- */
  function setTree() {
    let base = normal;
    if (TM && (st.range || (st.tthread >= 0 && st.thread < 0))) {
      const ranges = st.range ? (st.range2 ? [st.range, st.range2] : [st.range]) : [[0, TM.ncells]];
      base = M.rangeTree(normal, TM, ranges, st.tthread);
    }
    const f = st.thread >= 0 ? M.threadOf(base, st.thread) : base;
    if (f !== F) {
      F = f;
      reversed = null;
      relatives(st.sel);
    }
    if (!D.diff) diffScale = isDiff() ? M.diffScale(F, F.total[0], F.tb[0]) : 0;
    renderLegend();
    $("width").style.display = isDiff() ? "" : "none";
    T = st.reverse ? reversed || (reversed = M.reversedOf(F, names)) : F;
    widths();
    functions();
    renderTable();
    scope();
    rangeInfo();
    if (st.zoom >= T.n) st.zoom = 0;
    $("reverse").classList.toggle("on", st.reverse);
    $("icicle").classList.toggle("on", st.icicle);
  }
  function threadByName(nm) {
    for (const c of threads) if (names[normal.name[c]] === nm) return c;
    return -1;
  }
  function saveState() {
    const h = M.encodeState(st, threadName());
    if (location.hash === (h ? "#" + h : "")) return; /* a replaceState costs ms */
    history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
  }
  function loadState() {
    const s = M.decodeState(location.hash.slice(1));
    /* the event the fragment names (FG_DATA's choice: the first when it names none of them) */
    const named = EVENTS.find((x) => x.event === s.event) || EVENTS[0];
    if (EVENTS.length > 1 && named.event !== thisEvent) {
      location.reload(); /* another event: its data */
      return;
    }
    st.reverse = s.reverse;
    st.icicle = s.icicle;
    st.widthMode = s.widthMode;
    chooseThread(s.thread);
    sel.value = threadName() !== null ? s.thread : "";
    /* the ranges and the view, when they lie in this run */
    const fits = (r) => (TM && r && r[1] <= TM.ncells ? r : null);
    st.range = fits(s.range);
    st.range2 = st.range ? fits(s.range2) : null;
    st.view = fits(s.view);
    setTree();
    drawHeat();
    st.zoom = Math.min(s.zoom, T.n - 1);
    $("width").textContent = "Width: " + WIDTH_NAMES[st.widthMode];
    $("search").value = s.src;
    search($("search").value);
  }
  sel.addEventListener("change", () => {
    chooseThread(sel.value);
    st.zoom = 0;
    st.sel = -1;
    relatives(-1);
    setTree();
    search(st.src);
    drawHeat();
  });
  $("reset").onclick = () => zoom(0);
  $("reverse").onclick = () => {
    st.reverse = !st.reverse;
    st.zoom = 0;
    setTree();
    search(st.src);
  };
  $("icicle").onclick = () => {
    st.icicle = !st.icicle;
    setTree();
    saveState();
    draw();
  };
  $("width").onclick = () => {
    st.widthMode = (st.widthMode + 1) % 3;
    $("width").textContent = "Width: " + WIDTH_NAMES[st.widthMode];
    widths();
    search(st.src);
  };
  $("width").textContent = "Width: " + WIDTH_NAMES[st.widthMode];
  const darkPref = matchMedia("(prefers-color-scheme: dark)").matches;
  function setDark(on) {
    document.documentElement.classList.toggle("dark", on);
    $("dark").classList.toggle("on", on);
    draw();
    drawHeat();
  }
  $("dark").onclick = () => setDark(!document.documentElement.classList.contains("dark"));
  let timer = 0;
  $("search").addEventListener("input", (e) => {
    clearTimeout(timer);
    timer = setTimeout(() => search(e.target.value), 150);
  });
  $("search").addEventListener("keydown", (e) => {
    if (e.key === "Enter") step(e.shiftKey ? -1 : 1);
    if (e.key === "Escape") {
      e.target.value = "";
      search("");
    }
  });
  $("next").onclick = () => step(1);
  $("prev").onclick = () => step(-1);
  document.addEventListener("keydown", (e) => {
    if (
      (e.key === "/" && document.activeElement !== $("search")) ||
      ((e.ctrlKey || e.metaKey) && e.key === "f")
    ) {
      e.preventDefault();
      $("search").focus();
    }
    if (e.key === "Escape" && document.activeElement !== $("search")) zoom(0);
  });
  /* a new width (a resize, a scroll bar come or gone): the graph and the heat map drawn for it */
  function resized(always) {
    const w = $("graph").clientWidth - 32;
    if (w === drawWidth && !always) return;
    drawWidth = w;
    draw();
    drawHeat();
  }
  addEventListener("resize", () => resized(true));
  new ResizeObserver(() => resized(false)).observe($("graph"));
  addEventListener("hashchange", () => loadState());

  /* ---- start ---- */
  document.title = D.title || "Flame Graph";
  $("title").textContent = D.title || "Flame Graph";
  $("subtitle").textContent =
    (D.subtitle ? D.subtitle + " · " : "") +
    `${fmt(D.total)} ${cnt}` +
    (D.diff ? ` (base ${fmt(D.totalBase)})` : "");
  if (D.pruned && D.pruned.nodes)
    $("pruned").textContent =
      `${fmt(D.pruned.nodes)} frames holding ${fmt(D.pruned.samples)} ${cnt} are too small to draw and were left out of this page.`;
  document.documentElement.classList.toggle("dark", darkPref);
  $("dark").classList.toggle("on", darkPref);
  loadState();
  window.fgView = {
    search: (s) => {
      $("search").value = s;
      search(s);
      return $("matched").dataset.percent;
    },
    zoomTo: (name) => {
      for (let i = 1; i < T.n; i++)
        if (names[T.name[i]] === name) {
          zoom(i);
          return i;
        }
      return -1;
    },
    frameRect: (i) => {
      for (let k = 0; k < rects.length; k += 4)
        if (rects[k + 3] === i) return { x: rects[k], y: rects[k + 1], w: rects[k + 2] };
      return null;
    },
    frames: () => {
      const r = [];
      for (let k = 0; k < rects.length; k += 4) {
        const i = rects[k + 3];
        r.push({
          name: i ? names[T.name[i]] : "all",
          depth: T.depth[i],
          x: rects[k],
          y: rects[k + 1],
          w: rects[k + 2],
        });
      }
      return r;
    },
    canvasWidth: () => cv.clientWidth,
    canvasHeight: () => cv.clientHeight,
    frameHeight: FH,
    functions: () =>
      frows.slice(0, 50).map((r) => ({
        name: r.name,
        self: r.self,
        total: r.total,
        kinds: partsOf(r.m).map(([k, v]) => [k.id, v]),
      })),
    state: () => ({ zoom: st.zoom, search: st.src, reverse: st.reverse, icicle: st.icicle }),
    total: () => F.total[0],
    /* the time axis: choose cells [c0, c1) (second: the range compared with the first), the
       ranges chosen, the heat map's layout and boxes */
    selectRange: (c0, c1, second) => setRange([c0, c1], !!second),
    ranges: () => ({ range: st.range, range2: st.range2, view: st.view, diff: isDiff() }),
    heat: () =>
      HL && {
        cols: HL.cols,
        rows: HL.rows,
        box: HL.box,
        max: heat.max,
        sum: heat.values.reduce((a, b) => a + b, 0),
        colPx,
        rowPx,
      },
    rangeText: () => $("tlrange").textContent,
    drawn: () => rects.length / 4,
  };
  document.body.dataset.ready = "1";
})(FG_DATA, fgModel);

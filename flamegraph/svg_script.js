// svg_script.js — the interaction inside the standalone SVG written by fg_svg.c: hover
// details, click to zoom, reset, regex search with the matched percentage (keys: Ctrl+F or
// "/" search, Escape resets). Embedded into the library at build time; fg_svg.c emits
// `var FG_SVG = {...}` (geometry and labels) right before it. No external resources.
// Geometry is read back from each frame's <rect> once, at load; zooming rewrites x/width.
/* global FG_SVG */
/* exported fgInit */
"use strict";
var fg = { frames: [], zoomed: null, term: null };

function fgInit() {
  var root = document.getElementById("frames");
  var groups = root.getElementsByTagName("g");
  for (var i = 0; i < groups.length; i++) {
    var g = groups[i];
    var rect = g.getElementsByTagName("rect")[0];
    var text = g.getElementsByTagName("text")[0];
    var info = g.getElementsByTagName("title")[0].textContent;
    var name = info.slice(0, info.lastIndexOf(" ("));
    var f = {
      g: g,
      rect: rect,
      text: text,
      info: info,
      name: name,
      label: name.replace(/_\[[ji0k]\]$/, ""),
      x: +rect.getAttribute("x"),
      w: +rect.getAttribute("width"),
      y: +rect.getAttribute("y"),
      fill: rect.getAttribute("fill"),
    };
    g.fgIndex = i;
    fg.frames.push(f);
  }
  fg.details = document.getElementById("details");
  fg.unzoom = document.getElementById("unzoom");
  fg.search = document.getElementById("search");
  fg.matched = document.getElementById("matched");
  root.addEventListener("click", function (e) {
    var f = frameOf(e.target);
    if (f) zoom(f);
  });
  root.addEventListener("mouseover", function (e) {
    var f = frameOf(e.target);
    if (f) fg.details.textContent = f.info;
  });
  root.addEventListener("mouseout", function () {
    fg.details.textContent = " ";
  });
  fg.unzoom.addEventListener("click", unzoom);
  document.getElementById("background").addEventListener("click", unzoom);
  fg.search.addEventListener("click", function () {
    if (fg.term !== null) resetSearch();
    else askSearch();
  });
  window.addEventListener("keydown", function (e) {
    if ((e.key === "f" && (e.ctrlKey || e.metaKey)) || (e.key === "/" && !e.ctrlKey)) {
      e.preventDefault();
      askSearch();
    } else if (e.key === "Escape") {
      resetSearch();
      unzoom();
    }
  });
}

function frameOf(node) {
  while (node && node.nodeName !== "g") node = node.parentNode;
  return node && node.fgIndex !== undefined ? fg.frames[node.fgIndex] : null;
}

function setGeometry(f, x, w) {
  f.rect.setAttribute("x", x.toFixed(2));
  f.rect.setAttribute("width", w.toFixed(2));
  f.text.setAttribute("x", (x + 3).toFixed(2));
  var fit = Math.floor((w - 6) / (FG_SVG.fontSize * 0.59));
  var label = f.label;
  if (fit < 3) label = "";
  else if (label.length > fit) label = label.slice(0, fit - 2) + "..";
  f.text.textContent = label;
}

var EPS = 0.02; // geometry is written with 2 decimals

function zoom(target) {
  var full = FG_SVG.width - 2 * FG_SVG.xpad,
    scale = full / target.w;
  var below = function (o) {
    return FG_SVG.inverted ? o.y < target.y : o.y > target.y;
  };
  for (var i = 0; i < fg.frames.length; i++) {
    var o = fg.frames[i];
    var covers = o.x <= target.x + EPS && o.x + o.w >= target.x + target.w - EPS;
    var inside = o.x >= target.x - EPS && o.x + o.w <= target.x + target.w + EPS;
    if (below(o) && covers) {
      o.g.setAttribute("class", "parent");
      setGeometry(o, FG_SVG.xpad, full);
    } else if (!below(o) && inside && (o.y === target.y ? o === target : true)) {
      o.g.removeAttribute("class");
      setGeometry(o, FG_SVG.xpad + (o.x - target.x) * scale, o.w * scale);
    } else {
      o.g.setAttribute("class", "hide");
    }
  }
  fg.zoomed = target;
  fg.unzoom.removeAttribute("class");
}

function unzoom() {
  if (!fg.zoomed) return;
  for (var i = 0; i < fg.frames.length; i++) {
    var o = fg.frames[i];
    o.g.removeAttribute("class");
    setGeometry(o, o.x, o.w);
  }
  fg.zoomed = null;
  fg.unzoom.setAttribute("class", "hide");
}

function askSearch() {
  var term = window.prompt("Search frames (regular expression):", fg.term || "");
  if (term === null || term === "") return;
  var re;
  try {
    re = new RegExp(term);
  } catch (err) {
    window.alert("Not a valid regular expression: " + err.message);
    return;
  }
  runSearch(re, term);
}

// Highlights matching frames and shows the share of all samples under a match: the union
// of the matched frames' ranges, so a match nested in another match is not counted twice.
function runSearch(re, term) {
  var spans = [];
  for (var i = 0; i < fg.frames.length; i++) {
    var o = fg.frames[i];
    if (re.test(o.name)) {
      o.rect.setAttribute("fill", FG_SVG.searchColor);
      spans.push([o.x, o.x + o.w]);
    } else {
      o.rect.setAttribute("fill", o.fill);
    }
  }
  spans.sort(function (a, b) {
    return a[0] - b[0];
  });
  var sum = 0,
    end = -Infinity;
  for (var k = 0; k < spans.length; k++) {
    var s = Math.max(spans[k][0], end),
      e = spans[k][1];
    if (e > s) sum += e - s;
    if (e > end) end = e;
  }
  var pct = (100 * sum) / (FG_SVG.width - 2 * FG_SVG.xpad);
  fg.term = term;
  fg.search.textContent = "Reset Search";
  fg.matched.textContent = "Matched: " + (pct > 100 ? 100 : pct).toFixed(1) + "%";
  fg.matched.removeAttribute("class");
}

function resetSearch() {
  if (fg.term === null) return;
  for (var i = 0; i < fg.frames.length; i++)
    fg.frames[i].rect.setAttribute("fill", fg.frames[i].fill);
  fg.term = null;
  fg.search.textContent = "Search";
  fg.matched.setAttribute("class", "hide");
}

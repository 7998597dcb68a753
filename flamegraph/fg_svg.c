/*
 * fg_svg.c — the SVG flame graph, shaped like the classic output people post-process: one
 * <g> per frame holding <title>name (N samples, P%)</title>, a <rect> and a <text>; the
 * interaction (svg_script.js, embedded at build time) needs no external resource.
 * Also the palettes and options defaults.
 *
 * Two walks over the sorted tree: the first finds the drawn depth (for the image height), for
 * a differential graph the largest change (colour scale), and for the java palette the kinds
 * drawn (the legend row under the title); the second writes. Frames narrower than min_width
 * are left out with their subtrees. Colours are deterministic: by a hash of the name (--hash)
 * or by a fixed-seed sequence over the drawing order.
 */
#include "fg_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const k_palette_names[FG_PAL_COUNT] = {
    "hot", "mem", "io", "java", "red", "green", "blue", "aqua", "yellow", "purple", "orange",
};

/* fg_palette_parse: see flamegraph.h. */
int fg_palette_parse(const char *name, fg_palette *out) {
  for (int i = 0; i < FG_PAL_COUNT; i++)
    if (name && strcasecmp(name, k_palette_names[i]) == 0) {
      *out = (fg_palette)i;
      return 0;
    }
  return -EINVAL;
}

/* fg_palette_name: see flamegraph.h. */
const char *fg_palette_name(fg_palette pal) {
  return (unsigned)pal < FG_PAL_COUNT ? k_palette_names[pal] : "?";
}

/* fg_options_init: see flamegraph.h. */
void fg_options_init(fg_options *o) {
  memset(o, 0, sizeof *o);
  o->width = 1200;
  o->frame_height = 16;
  o->min_width = 0.1;
  o->palette = FG_PAL_HOT;
  o->html_prune = 1e-5;
  o->html_max_nodes = 200000;
  o->html_max_time = 1000000;
}

typedef struct rgb {
  int r, g, b;
} rgb;

static rgb mk(double r, double g, double b) { return (rgb){(int)r, (int)g, (int)b}; }

/* The java palette's colour of `kind` (fg_kinds) for a random number v in [0,1). */
static rgb java_colour(fg_kind kind, double v) {
  const fg_kind_info *k = &fg_kinds[(unsigned)kind < FG_KIND_COUNT ? kind : FG_KIND_NATIVE];
  return mk(k->base[0] + k->spread[0] * v, k->base[1] + k->spread[1] * v,
            k->base[2] + k->spread[2] * v);
}

/* A colour of `pal` for random numbers v1..v3 in [0,1). Java colours by frame kind. */
static rgb palette_color(fg_palette pal, fg_kind kind, double v1, double v2, double v3) {
  if (pal == FG_PAL_JAVA) return java_colour(kind, v1);
  switch (pal) {
  case FG_PAL_MEM: return mk(0, 190 + 50 * v2, 210 * v1);
  case FG_PAL_IO: return mk(80 + 60 * v1, 80 + 60 * v1, 190 + 55 * v2);
  case FG_PAL_RED: return mk(200 + 55 * v1, 50 + 80 * v1, 50 + 80 * v1);
  case FG_PAL_GREEN: return mk(50 + 60 * v1, 200 + 55 * v1, 50 + 60 * v1);
  case FG_PAL_BLUE: return mk(80 + 60 * v1, 80 + 60 * v1, 205 + 50 * v1);
  case FG_PAL_AQUA: return mk(50 + 60 * v1, 165 + 55 * v1, 165 + 55 * v1);
  case FG_PAL_YELLOW: return mk(175 + 55 * v1, 175 + 55 * v1, 50 + 20 * v1);
  case FG_PAL_PURPLE: return mk(190 + 65 * v1, 80 + 60 * v1, 190 + 65 * v1);
  case FG_PAL_ORANGE: return mk(190 + 65 * v1, 90 + 65 * v1, 0);
  default: return mk(205 + 50 * v3, 230 * v1, 55 * v2); /* hot */
  }
}

/* Differential colour: red where the frame grew, blue where it shrank, white-ish when equal;
 * v in [-1, 1] is the change relative to the largest change drawn. */
static rgb diff_color(double v) {
  if (v > 1) v = 1;
  if (v < -1) v = -1;
  double fade = 230 * (1 - fabs(v));
  return v >= 0 ? mk(255, 25 + fade, 25 + fade) : mk(25 + fade, 25 + fade, 255);
}

typedef struct svg_ctx {
  fg_buf *b;
  const fg_options *o;
  const char *count_name;
  double scale;  /* px per sample */
  double min_px; /* frames narrower are left out */
  uint64_t total, total_base;
  uint32_t max_drawn_depth;
  double max_change; /* diff: largest |change| drawn */
  int height, top, bottom;
  unsigned kinds_drawn; /* java palette: bit per fg_kind drawn (the legend's keys) */
  uint64_t rng;
  int pass;
} svg_ctx;

#define XPAD 10
#define FONT 12

/* Change of a frame between the base and main columns, as shares of each total
 * (diff_absolute: as raw sample counts). */
static double change_of(const svg_ctx *c, const fg_tree *t, uint32_t node) {
  double m = (double)t->total[node], b = (double)fg_tree_base(t, node);
  if (c->o->diff_absolute) return m - b;
  double sm = c->total ? m / (double)c->total : 0;
  double sb = c->total_base ? b / (double)c->total_base : 0;
  return sm - sb;
}

static double rng_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *s = x;
  return (double)(x >> 11) / 9007199254740992.0;
}

static void put_pct(fg_buf *b, uint64_t part, uint64_t whole) {
  fg_buf_fixed(b, whole ? 100.0 * (double)part / (double)whole : 0, 2);
  fg_buf_putc(b, '%');
}

static void put_rgb(fg_buf *b, rgb col) {
  fg_buf_puts(b, "rgb(");
  fg_buf_i64(b, col.r);
  fg_buf_putc(b, ',');
  fg_buf_i64(b, col.g);
  fg_buf_putc(b, ',');
  fg_buf_i64(b, col.b);
  fg_buf_putc(b, ')');
}

static void put_label(fg_buf *b, const char *s, size_t len, double width) {
  int fit = (int)((width - 6) / (FONT * 0.59));
  if (fit < 3) return;
  size_t chars = 0, i = 0;
  while (i < len && chars < (size_t)fit) {
    i++;
    while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
    chars++;
  }
  if (i >= len) {
    fg_buf_xml(b, s, len);
    return;
  }
  /* too long: keep fit-2 characters and ".." */
  size_t keep = 0;
  i = 0;
  while (i < len && keep < (size_t)fit - 2) {
    i++;
    while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
    keep++;
  }
  fg_buf_xml(b, s, i);
  fg_buf_puts(b, "..");
}

static int svg_visit(const fg_tree *t, uint32_t node, uint32_t depth, uint64_t left, void *ctx) {
  svg_ctx *c = ctx;
  const fg_profile *p = t->p;
  uint64_t tot = t->total[node];
  double w = (double)tot * c->scale;
  if (node != 0 && (tot == 0 || w < c->min_px)) return 0;
  if (c->pass == 0) {
    if (depth > c->max_drawn_depth) c->max_drawn_depth = depth;
    if (node != 0 && c->o->palette == FG_PAL_JAVA) {
      const fg_name *nm = &p->names[p->nodes[node].name];
      size_t disp;
      c->kinds_drawn |= FG_KBIT(fg_kind_of(nm->s, nm->len, &disp));
    }
    if (p->diff) {
      double ch = fabs(change_of(c, t, node));
      if (ch > c->max_change) c->max_change = ch;
    }
    return 1;
  }
  fg_buf *b = c->b;
  const char *name = "all";
  size_t len = 3, disp = 3;
  fg_kind kind = FG_KIND_THREAD; /* the root: the neutral grey of the thread roots */
  if (node != 0) {
    name = p->names[p->nodes[node].name].s;
    len = p->names[p->nodes[node].name].len;
    kind = fg_kind_of(name, len, &disp);
  }
  double x = XPAD + (double)left * c->scale;
  int fh = c->o->frame_height;
  int y = c->o->inverted ? c->top + (int)depth * fh : c->height - c->bottom - ((int)depth + 1) * fh;
  rgb col;
  if (p->diff) {
    col = diff_color(c->max_change > 0 ? change_of(c, t, node) / c->max_change : 0);
  } else if (c->o->hash) {
    uint32_t h1 = fg_hash_bytes(name, disp), h2 = h1 * 2654435761u, h3 = h2 * 2246822519u;
    col = palette_color(c->o->palette, kind, (h1 >> 8) / 16777216.0, (h2 >> 8) / 16777216.0,
                        (h3 >> 8) / 16777216.0);
  } else {
    double v1 = rng_next(&c->rng), v2 = rng_next(&c->rng), v3 = rng_next(&c->rng);
    col = palette_color(c->o->palette, kind, v1, v2, v3);
  }
  fg_buf_puts(b, "<g><title>");
  fg_buf_xml(b, name, len);
  fg_buf_puts(b, " (");
  fg_buf_u64_grouped(b, tot);
  fg_buf_putc(b, ' ');
  fg_buf_xml(b, c->count_name, strlen(c->count_name));
  fg_buf_puts(b, ", ");
  put_pct(b, tot, c->total);
  if (p->diff) {
    uint64_t base = fg_tree_base(t, node);
    fg_buf_puts(b, "; base ");
    fg_buf_u64_grouped(b, base);
    fg_buf_puts(b, ", ");
    put_pct(b, base, c->total_base);
    fg_buf_puts(b, "; ");
    double ch = change_of(c, t, node);
    if (c->o->diff_absolute) {
      fg_buf_putc(b, ch >= 0 ? '+' : '-');
      fg_buf_u64_grouped(b, (uint64_t)fabs(ch));
    } else {
      if (ch >= 0) fg_buf_putc(b, '+');
      fg_buf_fixed(b, 100 * ch, 2);
      fg_buf_puts(b, " pp");
    }
  }
  fg_buf_puts(b, ")</title><rect x=\"");
  fg_buf_fixed(b, x, 2);
  fg_buf_puts(b, "\" y=\"");
  fg_buf_i64(b, y);
  fg_buf_puts(b, "\" width=\"");
  fg_buf_fixed(b, w, 2);
  fg_buf_puts(b, "\" height=\"");
  fg_buf_i64(b, fh - 1);
  fg_buf_puts(b, "\" fill=\"");
  put_rgb(b, col);
  fg_buf_puts(b, "\" rx=\"2\" ry=\"2\"/><text x=\"");
  fg_buf_fixed(b, x + 3, 2);
  fg_buf_puts(b, "\" y=\"");
  fg_buf_fixed(b, y + fh / 2.0 + 4, 1);
  fg_buf_puts(b, "\">");
  put_label(b, name, disp, w);
  fg_buf_puts(b, "</text></g>\n");
  return b->err ? b->err : 1;
}

static void put_num_attr(fg_buf *b, const char *name, double v) {
  fg_buf_putc(b, ' ');
  fg_buf_puts(b, name);
  fg_buf_puts(b, "=\"");
  fg_buf_fixed(b, v, 1);
  fg_buf_putc(b, '"');
}

#define LEGEND_SWATCH 10
#define LEGEND_GAP 16

static const char *legend_label(const fg_legend_key *k, unsigned kinds) {
  /* without kind suffixes anywhere, green is simply Java */
  unsigned suffixed =
      FG_KBIT(FG_KIND_JIT) | FG_KBIT(FG_KIND_INLINED) | FG_KBIT(FG_KIND_INTERPRETED);
  return k->kinds & FG_KBIT(FG_KIND_JAVA) && !(kinds & suffixed) ? "Java" : k->label;
}

/* The java palette's legend: one key per colour drawn, centred on a row whose text baseline
 * is at y; each key's swatch is the middle of its kind's colour range. */
static void put_legend(fg_buf *b, unsigned kinds, int width, double y) {
  double total = 0;
  for (size_t i = 0; i < fg_legend_count; i++)
    if (fg_legend[i].kinds & kinds)
      total +=
          LEGEND_SWATCH + 4 + strlen(legend_label(&fg_legend[i], kinds)) * FONT * 0.59 + LEGEND_GAP;
  double x = (width - total + LEGEND_GAP) / 2;
  if (x < XPAD) x = XPAD;
  fg_buf_puts(b, "<g id=\"legend\">\n");
  for (size_t i = 0; i < fg_legend_count; i++) {
    const fg_legend_key *k = &fg_legend[i];
    if (!(k->kinds & kinds)) continue;
    const char *label = legend_label(k, kinds);
    fg_buf_puts(b, "<g class=\"key\" data-kind=\"");
    fg_buf_puts(b, k->id);
    fg_buf_puts(b, "\"><title>");
    fg_buf_xml(b, k->help, strlen(k->help));
    fg_buf_puts(b, "</title><rect");
    put_num_attr(b, "x", x);
    put_num_attr(b, "y", y - LEGEND_SWATCH + 1);
    fg_buf_puts(b, " width=\""
                   "10"
                   "\" height=\""
                   "10"
                   "\" rx=\"2\" fill=\"");
    unsigned kind = 0;
    while (!(k->kinds & FG_KBIT(kind))) kind++;
    put_rgb(b, java_colour((fg_kind)kind, 0.5));
    fg_buf_puts(b, "\"/><text");
    put_num_attr(b, "x", x + LEGEND_SWATCH + 4);
    put_num_attr(b, "y", y);
    fg_buf_putc(b, '>');
    fg_buf_puts(b, label);
    fg_buf_puts(b, "</text></g>\n");
    x += LEGEND_SWATCH + 4 + strlen(label) * FONT * 0.59 + LEGEND_GAP;
  }
  fg_buf_puts(b, "</g>\n");
}

/* fg_write_svg: see flamegraph.h. */
int fg_write_svg(FILE *out, const fg_profile *p, const fg_options *opts) {
  if (!out || !p) return -EINVAL;
  fg_options o;
  if (opts)
    o = *opts;
  else
    fg_options_init(&o);
  if (o.width <= 0) o.width = 1200;
  if (o.frame_height <= 0) o.frame_height = 16;
  if (o.width < 2 * XPAD + 10 || o.width > 1000000 || o.frame_height > 1000 ||
      !(o.min_width >= 0) || (o.min_width_pct && o.min_width > 100))
    return -EINVAL;
  fg_profile *rev = NULL;
  if (o.reverse) {
    rev = fg_profile_reversed(p);
    if (!rev) return -ENOMEM;
    p = rev;
  }
  fg_tree t;
  int rc = fg_tree_build(&t, p);
  if (rc) {
    fg_profile_free(rev);
    return rc;
  }
  fg_buf b;
  if (fg_buf_init(&b, out) != 0) {
    fg_tree_free(&t);
    fg_profile_free(rev);
    return -ENOMEM;
  }
  svg_ctx c = {.b = &b,
               .o = &o,
               .count_name = o.count_name ? o.count_name : "samples",
               .total = p->total[FG_MAIN],
               .total_base = p->total[FG_BASE],
               .rng = 0x9E3779B97F4A7C15ull};
  double full = o.width - 2 * XPAD;
  c.scale = c.total ? full / (double)c.total : 0;
  c.min_px = o.min_width_pct ? full * o.min_width / 100.0 : o.min_width;
  rc = fg_tree_walk(&t, svg_visit, &c);
  c.top = FONT * 3 + (o.subtitle ? FONT * 2 : 0);
  int legend = o.palette == FG_PAL_JAVA && !p->diff && c.kinds_drawn;
  double legend_y = c.top + FONT + 2;
  if (legend) c.top += FONT * 2;
  c.bottom = FONT * 2 + 10;
  c.height = c.top + ((int)c.max_drawn_depth + 1) * o.frame_height + c.bottom;
  const char *title = o.title ? o.title : p->diff ? "Differential Flame Graph" : "Flame Graph";

  fg_buf_puts(&b, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"");
  fg_buf_i64(&b, o.width);
  fg_buf_puts(&b, "\" height=\"");
  fg_buf_i64(&b, c.height);
  fg_buf_puts(&b, "\" onload=\"fgInit()\" viewBox=\"0 0 ");
  fg_buf_i64(&b, o.width);
  fg_buf_putc(&b, ' ');
  fg_buf_i64(&b, c.height);
  fg_buf_puts(&b, "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
                  "<!-- Flame graph written by sampler's flamegraph " FG_VERSION ". -->\n"
                  "<style type=\"text/css\">\n"
                  "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
                  "#title { text-anchor: middle; font-size: 17px; }\n"
                  "#subtitle { text-anchor: middle; fill: #555; }\n"
                  "#search, #matched { text-anchor: end; }\n"
                  "#unzoom, #search { cursor: pointer; }\n"
                  "#frames g { cursor: pointer; }\n"
                  "#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
                  "#frames text { pointer-events: none; }\n"
                  "g.parent { opacity: 0.55; }\n"
                  ".hide { display: none; }\n"
                  "</style>\n<script type=\"text/ecmascript\"><![CDATA[\nvar FG_SVG = { width: ");
  fg_buf_i64(&b, o.width);
  fg_buf_puts(&b, ", xpad: "
                  "10"
                  ", fontSize: "
                  "12"
                  ", inverted: ");
  fg_buf_puts(&b, o.inverted ? "true" : "false");
  fg_buf_puts(&b, ", searchColor: \"rgb(230,0,230)\" };\n");
  fg_buf_put(&b, (const char *)fg_svg_script, fg_svg_script_len);
  fg_buf_puts(&b, "]]></script>\n<rect id=\"background\" x=\"0\" y=\"0\" width=\"100%\" "
                  "height=\"100%\" fill=\"#f8f8f4\"/>\n");
  fg_buf_puts(&b, "<text id=\"title\"");
  put_num_attr(&b, "x", o.width / 2.0);
  put_num_attr(&b, "y", FONT * 2);
  fg_buf_putc(&b, '>');
  fg_buf_xml(&b, title, strlen(title));
  fg_buf_puts(&b, "</text>\n");
  if (o.subtitle) {
    fg_buf_puts(&b, "<text id=\"subtitle\"");
    put_num_attr(&b, "x", o.width / 2.0);
    put_num_attr(&b, "y", FONT * 4);
    fg_buf_putc(&b, '>');
    fg_buf_xml(&b, o.subtitle, strlen(o.subtitle));
    fg_buf_puts(&b, "</text>\n");
  }
  fg_buf_puts(&b, "<text id=\"unzoom\" class=\"hide\"");
  put_num_attr(&b, "x", XPAD);
  put_num_attr(&b, "y", FONT * 2);
  fg_buf_puts(&b, ">Reset Zoom</text>\n<text id=\"search\"");
  put_num_attr(&b, "x", o.width - XPAD);
  put_num_attr(&b, "y", FONT * 2);
  fg_buf_puts(&b, ">Search</text>\n<text id=\"details\"");
  put_num_attr(&b, "x", XPAD);
  put_num_attr(&b, "y", c.height - FONT / 2.0 - 5);
  fg_buf_puts(&b, "> </text>\n<text id=\"matched\" class=\"hide\"");
  put_num_attr(&b, "x", o.width - XPAD);
  put_num_attr(&b, "y", c.height - FONT / 2.0 - 5);
  fg_buf_puts(&b, "> </text>\n");
  if (legend) put_legend(&b, c.kinds_drawn, o.width, legend_y);
  fg_buf_puts(&b, "<g id=\"frames\">\n");
  if (rc == 0 && c.total > 0) {
    c.pass = 1;
    rc = fg_tree_walk(&t, svg_visit, &c);
  }
  fg_buf_puts(&b, "</g>\n</svg>\n");
  int rc2 = fg_buf_finish(&b);
  fg_tree_free(&t);
  fg_profile_free(rev);
  return rc ? rc : rc2;
}

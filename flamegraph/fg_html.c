/*
 * fg_html.c — the self-contained interactive HTML: the viewer page (flamegraph/page/
 * viewer.html with its scripts, assembled and embedded at build time) with its one FG_DATA
 * marker line replaced by `const FG_DATA = <json>;` (schema version 1, see
 * flamegraph/README.md): the profile, each name's frame kind (fg_kind_of, so that the page
 * never re-derives it) and the palette (fg_kinds, fg_legend: one definition for SVG and page).
 *
 * Size control: subtrees below o->html_prune of the total (in both columns of a diff) are
 * left out and counted in "pruned"; when more than o->html_max_nodes remain, the cut is
 * raised until the largest nodes fit (a node's share is never larger than its parent's, so
 * a cut by share always keeps whole top-down subtrees).
 * Several profiles (the agent's events: fg_write_html_events) go in as `const FG_EVENTS =
 * [{"event":..,"data":<json>},...]`, FG_DATA the one the URL fragment's e= names.
 * Hazards: the JSON sits inside a <script> element, so '<' is written as \u003c (a name
 * containing "</script>" cannot close it); names that are not valid UTF-8 (possible through
 * the API) are written with U+FFFD.
 */
#include "fg_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char k_marker[] = "/*@FG_DATA@*/";

typedef struct kept {
  uint32_t node, depth;
} kept;

typedef struct html_ctx {
  kept *list;
  size_t n, cap;
  uint32_t *name_map; /* profile name id -> JSON index, FG_NO_NAME when unused */
  uint32_t *names;    /* JSON index -> profile name id */
  uint32_t nnames;
  uint32_t *page_of; /* profile node -> index in the page's nodes (time axis), FG_NO_NAME */
  uint64_t min_main, min_base; /* keep a node when either total reaches its threshold */
  uint64_t pruned_samples;
} html_ctx;

static int html_visit(const fg_tree *t, uint32_t node, uint32_t depth, uint64_t left, void *ctx) {
  (void)left;
  html_ctx *c = ctx;
  uint64_t m = t->total[node], b = fg_tree_base(t, node);
  if (node != 0 && !((m && m >= c->min_main) || (b && b >= c->min_base))) {
    c->pruned_samples += m;
    return 0;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 4096;
    kept *nl = realloc(c->list, cap * sizeof *nl);
    if (!nl) return -ENOMEM;
    c->list = nl;
    c->cap = cap;
  }
  c->list[c->n++] = (kept){node, depth};
  if (node != 0) {
    uint32_t name = t->p->nodes[node].name;
    if (c->name_map[name] == FG_NO_NAME) {
      c->name_map[name] = c->nnames;
      c->names[c->nnames++] = name;
    }
  }
  return 1;
}

/* The smallest count whose share of `total` reaches `frac`. */
static uint64_t threshold(uint64_t total, double frac) {
  if (frac <= 0) return 0;
  double v = ceil((double)total * frac * (1 - 1e-12));
  return v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
}

#define SHARE_BUCKETS 4096 /* 64 per octave: shares down to 2^-64 */

/* A node's share: the larger of its two columns' shares of their totals (0: never kept). */
static double share_of(const fg_tree *t, uint32_t i, double tm, double tb) {
  double x = tm > 0 ? (double)t->total[i] / tm : 0;
  if (tb > 0) {
    double y = (double)fg_tree_base(t, i) / tb;
    if (y > x) x = y;
  }
  return x;
}

static size_t bucket_of(double x) {
  double b = -log2(x) * 64;
  return b >= SHARE_BUCKETS - 1 ? SHARE_BUCKETS - 1 : (size_t)b;
}

static int desc_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The smallest share cut that keeps at most `budget` nodes (the root included): a log-scale
 * histogram of every node's share finds the bucket where the budget runs out, then the
 * shares inside that bucket are sorted to place the cut exactly (equal shares stay together,
 * so a cut can keep fewer than the budget). 0 when everything fits. */
static double share_cut(const fg_tree *t, size_t budget) {
  const fg_profile *p = t->p;
  if (budget == 0 || p->nnodes <= budget) return 0;
  uint64_t *hist = calloc(SHARE_BUCKETS, sizeof *hist);
  if (!hist) return 1; /* out of memory: keep only the root rather than fail */
  double tm = (double)p->total[FG_MAIN], tb = (double)p->total[FG_BASE];
  for (uint32_t i = 1; i < p->nnodes; i++) {
    double x = share_of(t, i, tm, tb);
    if (x > 0) hist[bucket_of(x)]++;
  }
  size_t j = 0;
  uint64_t kept = 1;
  for (; j < SHARE_BUCKETS; j++) {
    if (kept + hist[j] > budget) break;
    kept += hist[j];
  }
  double cut = 0;
  if (j < SHARE_BUCKETS) {
    cut = exp2(-(double)j / 64) * (1 + 1e-9); /* bucket j and below go ... */
    double *in = malloc(hist[j] * sizeof *in);
    if (in) { /* ... unless part of bucket j still fits */
      size_t n = 0;
      for (uint32_t i = 1; i < p->nnodes && n < hist[j]; i++) {
        double x = share_of(t, i, tm, tb);
        if (x > 0 && bucket_of(x) == j) in[n++] = x;
      }
      qsort(in, n, sizeof *in, desc_double);
      size_t k = 0;
      while (k < n) {
        size_t e = k;
        while (e < n && in[e] == in[k]) e++;
        if (kept + (e - k) > budget) break;
        kept += e - k;
        k = e;
      }
      if (k < n) cut = in[k] * (1 + 1e-9);
      free(in);
    }
  }
  free(hist);
  return cut;
}

static void json_str_or_null(fg_buf *b, const char *s) {
  if (s)
    fg_buf_json(b, s, strlen(s));
  else
    fg_buf_puts(b, "null");
}

static void put_u8_triple(fg_buf *b, const unsigned char v[3]) {
  for (int i = 0; i < 3; i++) {
    fg_buf_putc(b, i ? ',' : '[');
    fg_buf_u64(b, v[i]);
  }
  fg_buf_putc(b, ']');
}

static void put_str(fg_buf *b, const char *s) { fg_buf_json(b, s, strlen(s)); }

/* The start of one palette entry, on a line of its own: {"id":..,"label":..,<field>:<text>
 * (field as `,"name":`); the caller adds the rest and the closing brace. */
static void put_entry_head(fg_buf *b, int first, const char *id, const char *label,
                           const char *field, const char *text) {
  fg_buf_puts(b, first ? "\n{\"id\":" : ",\n{\"id\":");
  put_str(b, id);
  fg_buf_puts(b, ",\"label\":");
  put_str(b, label);
  fg_buf_puts(b, field);
  put_str(b, text);
}

/* "palette": the kinds (fg_kinds, indexed like "nameKinds") and the legend's keys, each key's
 * kinds with the one it is named after (its swatch) first — the page draws from these. */
static void put_palette(fg_buf *b) {
  fg_buf_puts(b, "\"palette\":{\"kinds\":[");
  for (int k = 0; k < FG_KIND_COUNT; k++) {
    const fg_kind_info *ki = &fg_kinds[k];
    put_entry_head(b, k == 0, ki->id, ki->label, ",\"suffix\":", ki->suffix);
    fg_buf_puts(b, ",\"base\":");
    put_u8_triple(b, ki->base);
    fg_buf_puts(b, ",\"spread\":");
    put_u8_triple(b, ki->spread);
    fg_buf_putc(b, '}');
  }
  fg_buf_puts(b, "],\n\"legend\":[");
  for (size_t i = 0; i < fg_legend_count; i++) {
    const fg_legend_key *key = &fg_legend[i];
    put_entry_head(b, i == 0, key->id, key->label, ",\"help\":", key->help);
    fg_buf_puts(b, ",\"kinds\":[");
    int first = -1, n = 0;
    for (int k = 0; k < FG_KIND_COUNT; k++)
      if (key->kinds & FG_KBIT(k) && strcmp(fg_kinds[k].id, key->id) == 0) first = k;
    if (first >= 0) {
      fg_buf_u64(b, (uint64_t)first);
      n++;
    }
    for (int k = 0; k < FG_KIND_COUNT; k++)
      if (key->kinds & FG_KBIT(k) && k != first) {
        if (n++) fg_buf_putc(b, ',');
        fg_buf_u64(b, (uint64_t)k);
      }
    fg_buf_puts(b, "]}");
  }
  fg_buf_puts(b, "]}");
}

/* The page's data object of p ({"version":1,...}) into b. 0 or a negative code. */
static int put_data(fg_buf *b, const fg_profile *p, const fg_options *opts) {
  fg_options o;
  if (opts)
    o = *opts;
  else
    fg_options_init(&o);
  if (!(o.html_prune >= 0 && o.html_prune <= 1)) return -EINVAL;
  fg_tree t;
  int rc = fg_tree_build(&t, p);
  if (rc) return rc;
  double cut = share_cut(&t, o.html_max_nodes);
  if (cut < o.html_prune) cut = o.html_prune;
  html_ctx c = {.min_main = threshold(p->total[FG_MAIN], cut),
                .min_base = threshold(p->total[FG_BASE], cut)};
  c.name_map = malloc(((size_t)p->nnames + 1) * sizeof *c.name_map);
  c.names = malloc(((size_t)p->nnames + 1) * sizeof *c.names);
  if (!c.name_map || !c.names) {
    rc = -ENOMEM;
    goto done;
  }
  memset(c.name_map, 0xff, (size_t)p->nnames * sizeof *c.name_map);
  rc = fg_tree_walk(&t, html_visit, &c);
  if (rc) goto done;

  int diff = p->diff;
  fg_buf_puts(b, "{\"version\":1,\"title\":");
  const char *title = o.title ? o.title : diff ? "Differential Flame Graph" : "Flame Graph";
  fg_buf_json(b, title, strlen(title));
  fg_buf_puts(b, ",\"subtitle\":");
  json_str_or_null(b, o.subtitle);
  fg_buf_puts(b, ",\"countName\":");
  json_str_or_null(b, o.count_name ? o.count_name : "samples");
  fg_buf_puts(b, diff ? ",\"diff\":true,\"total\":" : ",\"diff\":false,\"total\":");
  fg_buf_u64(b, p->total[FG_MAIN]);
  if (diff) {
    fg_buf_puts(b, ",\"totalBase\":");
    fg_buf_u64(b, p->total[FG_BASE]);
  }
  fg_buf_puts(b, ",\n\"names\":[");
  for (uint32_t i = 0; i < c.nnames; i++) {
    if (i) fg_buf_puts(b, (i & 63) ? "," : ",\n");
    const fg_name *nm = &p->names[c.names[i]];
    fg_buf_json(b, nm->s, nm->len);
  }
  fg_buf_puts(b, "],\n\"nameKinds\":[");
  for (uint32_t i = 0; i < c.nnames; i++) {
    if (i) fg_buf_puts(b, (i & 63) ? "," : ",\n");
    const fg_name *nm = &p->names[c.names[i]];
    size_t disp;
    fg_buf_u64(b, (uint64_t)fg_kind_of(nm->s, nm->len, &disp));
  }
  fg_buf_puts(b, diff ? "],\n\"stride\":6,\"nodes\":[" : "],\n\"stride\":4,\"nodes\":[");
  for (size_t i = 0; i < c.n; i++) {
    uint32_t node = c.list[i].node;
    if (i) fg_buf_puts(b, (i & 31) ? "," : ",\n");
    if (node == 0)
      fg_buf_puts(b, "-1");
    else
      fg_buf_u64(b, c.name_map[p->nodes[node].name]);
    fg_buf_putc(b, ',');
    fg_buf_u64(b, c.list[i].depth);
    fg_buf_putc(b, ',');
    fg_buf_u64(b, t.total[node]);
    fg_buf_putc(b, ',');
    fg_buf_u64(b, fg_self(p, node, FG_MAIN));
    if (diff) {
      fg_buf_putc(b, ',');
      fg_buf_u64(b, fg_tree_base(&t, node));
      fg_buf_putc(b, ',');
      fg_buf_u64(b, fg_self(p, node, FG_BASE));
    }
  }
  fg_buf_puts(b, "],\n\"pruned\":{\"nodes\":");
  fg_buf_u64(b, p->nnodes - c.n); /* every node not kept lies in a pruned subtree */
  fg_buf_puts(b, ",\"samples\":");
  fg_buf_u64(b, c.pruned_samples);
  fg_buf_putc(b, '}');
  if (p->time) {
    c.page_of = malloc((size_t)p->nnodes * sizeof *c.page_of);
    if (!c.page_of) {
      rc = -ENOMEM;
      goto done;
    }
    memset(c.page_of, 0xff, (size_t)p->nnodes * sizeof *c.page_of);
    for (size_t i = 0; i < c.n; i++) c.page_of[c.list[i].node] = (uint32_t)i;
    rc = fg_time_write_page(b, p, c.page_of, o.html_max_time);
    if (rc) goto done;
  }
  fg_buf_puts(b, ",\n");
  put_palette(b);
  fg_buf_puts(b, "}");
done:
  free(c.list);
  free(c.name_map);
  free(c.names);
  free(c.page_of);
  fg_tree_free(&t);
  return rc;
}

/* The page with ps[0..n) as its data: one (events NULL) as FG_DATA; several as FG_EVENTS, each
 * named by events[i], FG_DATA the one the fragment's e= names (else the first). */
static int write_page(FILE *out, const fg_profile *const *ps, const fg_options *os,
                      const char *const *events, size_t n) {
  if (!out || !n) return -EINVAL;
  for (size_t i = 0; i < n; i++)
    if (!ps[i]) return -EINVAL;
  const char *tpl = (const char *)fg_viewer_html;
  const char *mark = NULL;
  for (size_t i = 0; i + sizeof k_marker - 1 <= fg_viewer_html_len; i++)
    if (tpl[i] == '/' && memcmp(tpl + i, k_marker, sizeof k_marker - 1) == 0) {
      mark = tpl + i;
      break;
    }
  if (!mark) return -EINVAL; /* a template without the data line: a build problem */
  fg_buf b = {0};
  if (fg_buf_init(&b, out) != 0) return -ENOMEM;
  fg_buf_put(&b, tpl, (size_t)(mark - tpl));
  int rc = 0;
  if (!events) {
    fg_buf_puts(&b, "const FG_DATA = ");
    rc = put_data(&b, ps[0], os);
  } else {
    fg_buf_puts(&b, "const FG_EVENTS = [");
    for (size_t i = 0; i < n && !rc; i++) {
      fg_buf_puts(&b, i ? ",\n{\"event\":" : "{\"event\":");
      put_str(&b, events[i]);
      fg_buf_puts(&b, ",\"data\":");
      rc = put_data(&b, ps[i], os ? &os[i] : NULL);
      fg_buf_putc(&b, '}');
    }
    fg_buf_puts(&b, "];\nconst FG_DATA = FG_EVENTS[Math.max(0, FG_EVENTS.findIndex((x) => x.event "
                    "=== new URLSearchParams(location.hash.slice(1)).get(\"e\")))].data");
  }
  fg_buf_puts(&b, ";");
  const char *rest = mark + sizeof k_marker - 1;
  if (!rc) fg_buf_put(&b, rest, fg_viewer_html_len - (size_t)(rest - tpl));
  int rc2 = fg_buf_finish(&b);
  return rc ? rc : rc2;
}

/* fg_write_html: see flamegraph.h. */
int fg_write_html(FILE *out, const fg_profile *p, const fg_options *o) {
  return write_page(out, &p, o, NULL, 1);
}

/* fg_write_html_events: see flamegraph.h. */
int fg_write_html_events(FILE *out, const fg_profile *const *ps, const fg_options *os,
                         const char *const *events, size_t n) {
  if (!events) return -EINVAL;
  return write_page(out, ps, os, events, n);
}

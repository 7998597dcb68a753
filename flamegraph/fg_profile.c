/*
 * fg_profile.c — the profile: interned names, the (parent, name) tree, totals, reversal, and
 * the sorted tree view (fg_tree) the writers walk.
 *
 * Built for big inputs (millions of frames): names are hashed once into an arena, children
 * are found through one open-addressing table keyed by (parent, name id), nodes are 24 bytes
 * in one array. Hazards: node and name ids are uint32_t (limit ~4 billion, checked); totals
 * are capped at INT64_MAX so every writer can print exact integers.
 */
#include "fg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct fg_arena_block {
  fg_arena_block *next;
  size_t used, cap;
  char data[];
};

#define FG_ARENA_BLOCK (1u << 20)

static char *arena_alloc(fg_profile *p, size_t n) {
  fg_arena_block *b = p->arena;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > FG_ARENA_BLOCK ? n : FG_ARENA_BLOCK;
    fg_arena_block *nb = malloc(sizeof *nb + cap);
    if (!nb) return NULL;
    nb->next = b;
    nb->used = 0;
    nb->cap = cap;
    p->arena = nb;
    b = nb;
  }
  char *r = b->data + b->used;
  b->used += n;
  return r;
}

/* See fg_internal.h. */
char *fg_arena_strdup(fg_profile *p, const char *s, size_t len) {
  char *d = arena_alloc(p, len + 1);
  if (!d) return NULL;
  memcpy(d, s, len);
  d[len] = '\0';
  return d;
}

/* See fg_internal.h. 8 bytes per step (names average ~30 bytes; a byte-serial hash was a
 * measurable part of reading). */
uint32_t fg_hash_bytes(const char *s, size_t len) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
  }
  uint64_t w = 0;
  memcpy(&w, s + i, len - i);
  h = (h ^ w) * 0x94D049BB133111EBull;
  h ^= h >> 32;
  return (uint32_t)h;
}

static int grow_name_table(fg_profile *p);
static int grow_child_table(fg_profile *p);

/* See fg_internal.h. */
void fg_hint_huge(void *ptr, size_t size) {
  const uintptr_t huge = 2u << 20;
  if (!ptr || size < 4 * huge) return;
  uintptr_t a = ((uintptr_t)ptr + huge - 1) & ~(huge - 1);
  uintptr_t b = ((uintptr_t)ptr + size) & ~(huge - 1);
  if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
}

/* Room for `cap` nodes (and their base column, when there is one). */
static int grow_nodes(fg_profile *p, size_t cap) {
  if (cap > UINT32_MAX / 2) return -ENOMEM;
  fg_node *nn = realloc(p->nodes, cap * sizeof *nn);
  if (!nn) return -ENOMEM;
  p->nodes = nn;
  fg_hint_huge(nn, cap * sizeof *nn);
  if (p->self_base) {
    uint64_t *nb = realloc(p->self_base, cap * sizeof *nb);
    if (!nb) return -ENOMEM;
    p->self_base = nb;
    fg_hint_huge(nb, cap * sizeof *nb);
  }
  p->nodes_cap = (uint32_t)cap;
  return 0;
}

/* fg_profile_new: see flamegraph.h. */
fg_profile *fg_profile_new(void) {
  fg_profile *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->nodes_cap = 1024;
  p->nodes = malloc(p->nodes_cap * sizeof *p->nodes);
  if (!p->nodes || grow_name_table(p) != 0 || grow_child_table(p) != 0) {
    fg_profile_free(p);
    return NULL;
  }
  p->nodes[0] = (fg_node){.parent = FG_NO_NAME, .name = FG_NO_NAME};
  p->nnodes = 1;
  return p;
}

/* fg_profile_free: see flamegraph.h. NULL is fine. */
void fg_profile_free(fg_profile *p) {
  if (!p) return;
  for (fg_arena_block *b = p->arena, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  free(p->names);
  free(p->name_table);
  free(p->nodes);
  free(p->self_base);
  free(p->child_table);
  fg_time_free(p->time);
  free(p);
}

/* (Re)builds the name table with room for at least twice the names. */
static int grow_name_table(fg_profile *p) {
  uint32_t mask = p->name_mask ? p->name_mask : 1023;
  while ((uint64_t)p->nnames * 2 >= mask) mask = mask * 2 + 1;
  uint32_t *t = calloc((size_t)mask + 1, sizeof *t);
  if (!t) return -ENOMEM;
  for (uint32_t i = 0; i < p->nnames; i++) {
    uint32_t h = p->names[i].hash & mask;
    while (t[h]) h = (h + 1) & mask;
    t[h] = i + 1;
  }
  free(p->name_table);
  p->name_table = t;
  p->name_mask = mask;
  return 0;
}

/* See fg_internal.h. */
uint32_t fg_intern(fg_profile *p, const char *s, size_t len) {
  return fg_intern_h(p, s, len, fg_hash_bytes(s, len));
}

/* See fg_internal.h. */
uint32_t fg_intern_h(fg_profile *p, const char *s, size_t len, uint32_t hash) {
  if (len >= UINT32_MAX) return FG_NO_NAME;
  if (!p->name_table && grow_name_table(p) != 0) return FG_NO_NAME;
  uint32_t h = hash & p->name_mask;
  for (uint32_t e; (e = p->name_table[h]) != 0; h = (h + 1) & p->name_mask) {
    const fg_name *n = &p->names[e - 1];
    if (n->hash == hash && n->len == len && memcmp(n->s, s, len) == 0) return e - 1;
  }
  if (p->nnames >= UINT32_MAX - 2) return FG_NO_NAME;
  if (p->nnames == p->names_cap) {
    uint32_t cap = p->names_cap ? p->names_cap * 2 : 256;
    fg_name *nn = realloc(p->names, cap * sizeof *nn);
    if (!nn) return FG_NO_NAME;
    p->names = nn;
    p->names_cap = cap;
  }
  char *copy = arena_alloc(p, len + 1);
  if (!copy) return FG_NO_NAME;
  memcpy(copy, s, len);
  copy[len] = '\0';
  uint32_t id = p->nnames++;
  p->names[id] = (fg_name){.s = copy, .len = (uint32_t)len, .hash = hash};
  p->name_table[h] = id + 1;
  if ((uint64_t)p->nnames * 2 > p->name_mask && grow_name_table(p) != 0) {
    /* the name is stored; the table just stays fuller than we like */
  }
  return id;
}

/* (Re)builds the child table with room for at least twice the nodes. */
static int grow_child_table(fg_profile *p) {
  uint32_t mask = p->child_mask ? p->child_mask : 4095;
  while ((uint64_t)p->nnodes * 4 >= (uint64_t)mask * 3) mask = mask * 2 + 1;
  fg_child_slot *t = calloc((size_t)mask + 1, sizeof *t);
  if (!t) return -ENOMEM;
  fg_hint_huge(t, ((size_t)mask + 1) * sizeof *t);
  /* path hashes, recomputed in one forward pass (parents come before their children) */
  uint32_t *ph = malloc(((size_t)p->nnodes + 1) * sizeof *ph);
  if (!ph) {
    free(t);
    return -ENOMEM;
  }
  ph[0] = FG_ROOT_HASH;
  for (uint32_t i = 1; i < p->nnodes; i++) {
    ph[i] = fg_path_hash(ph[p->nodes[i].parent], p->nodes[i].name);
    uint32_t h = ph[i] & mask;
    while (t[h].node) h = (h + 1) & mask;
    t[h] = (fg_child_slot){i, ph[i]};
  }
  free(ph);
  free(p->child_table);
  p->child_table = t;
  p->child_mask = mask;
  return 0;
}

/* See fg_internal.h. */
/* See fg_internal.h. */
uint32_t fg_child_h(fg_profile *p, uint32_t parent, uint32_t name, uint32_t hash) {
  if (!p->child_table && grow_child_table(p) != 0) return FG_NO_NAME;
  uint32_t h = hash & p->child_mask;
  for (const fg_child_slot *e; (e = &p->child_table[h])->node != 0; h = (h + 1) & p->child_mask)
    if (e->hash == hash && p->nodes[e->node].parent == parent && p->nodes[e->node].name == name)
      return e->node;
  if (p->nnodes >= UINT32_MAX / 2 - 1) return FG_NO_NAME;
  if (p->nnodes == p->nodes_cap && grow_nodes(p, (size_t)p->nodes_cap * 2) != 0) return FG_NO_NAME;
  uint32_t id = p->nnodes++;
  p->nodes[id] = (fg_node){.parent = parent, .name = name};
  if (p->self_base) p->self_base[id] = 0;
  p->child_table[h] = (fg_child_slot){id, hash};
  if ((uint64_t)p->nnodes * 4 > (uint64_t)p->child_mask * 3 && grow_child_table(p) != 0) {
    /* stored; a fuller table only costs probes */
  }
  return id;
}

/* See fg_internal.h. */
int fg_profile_reserve(fg_profile *p, size_t nodes) {
  if (nodes >= UINT32_MAX / 4) nodes = UINT32_MAX / 4;
  if (nodes > p->nodes_cap && grow_nodes(p, nodes) != 0) return -ENOMEM;
  if ((uint64_t)nodes * 4 >= (uint64_t)p->child_mask * 3 || !p->child_table) {
    uint32_t mask = p->child_mask ? p->child_mask : 4095;
    while ((uint64_t)nodes * 4 >= (uint64_t)mask * 3) mask = mask * 2 + 1;
    p->child_mask = mask;
    return grow_child_table(p);
  }
  return 0;
}

/* fg_profile_trim: see flamegraph.h. */
void fg_profile_trim(fg_profile *p) {
  if (!p) return;
  free(p->child_table);
  p->child_table = NULL;
  free(p->name_table);
  p->name_table = NULL;
}

/* See fg_internal.h. */
int fg_node_add(fg_profile *p, uint32_t node, uint64_t count, int column) {
  if (count > (uint64_t)INT64_MAX - p->total[column]) return -EINVAL;
  if (column == FG_BASE && !p->self_base) {
    p->self_base = calloc(p->nodes_cap, sizeof *p->self_base);
    if (!p->self_base) return -ENOMEM;
    fg_hint_huge(p->self_base, p->nodes_cap * sizeof *p->self_base);
  }
  if (column == FG_MAIN)
    p->nodes[node].self += count;
  else
    p->self_base[node] += count;
  p->total[column] += count;
  if (column == FG_BASE) p->diff = 1;
  return 0;
}

/* See fg_internal.h. */
int fg_profile_add_n_at(fg_profile *p, const char *const *frames, const size_t *lens,
                        size_t nframes, uint64_t count, int column, uint32_t *at) {
  if (!p || nframes == 0 || (column != FG_MAIN && column != FG_BASE)) return -EINVAL;
  for (size_t i = 0; i < nframes; i++)
    if (lens[i] == 0) return -EINVAL;
  uint32_t node = 0, hash = FG_ROOT_HASH;
  for (size_t i = 0; i < nframes; i++) {
    uint32_t name = fg_intern(p, frames[i], lens[i]);
    if (name == FG_NO_NAME) return -ENOMEM;
    hash = fg_path_hash(hash, name);
    node = fg_child_h(p, node, name, hash);
    if (node == FG_NO_NAME) return -ENOMEM;
  }
  if (at) *at = node;
  return fg_node_add(p, node, count, column);
}

/* fg_profile_add_n: see flamegraph.h. */
int fg_profile_add_n(fg_profile *p, const char *const *frames, const size_t *lens, size_t nframes,
                     uint64_t count, int column) {
  return fg_profile_add_n_at(p, frames, lens, nframes, count, column, NULL);
}

/* fg_profile_add into FG_MAIN, giving the node the count went to (*at, when not NULL). */
static int add_at(fg_profile *p, const char *const *frames, size_t nframes, uint64_t count,
                  uint32_t *at) {
  if (!p || !frames || nframes == 0) return -EINVAL;
  size_t small[64];
  size_t *lens = nframes <= 64 ? small : malloc(nframes * sizeof *lens);
  if (!lens) return -ENOMEM;
  int rc = 0;
  for (size_t i = 0; i < nframes; i++) {
    if (!frames[i]) {
      rc = -EINVAL;
      break;
    }
    lens[i] = strlen(frames[i]);
  }
  if (rc == 0) rc = fg_profile_add_n_at(p, frames, lens, nframes, count, FG_MAIN, at);
  if (lens != small) free(lens);
  return rc;
}

/* fg_profile_add: see flamegraph.h. */
int fg_profile_add(fg_profile *p, const char *const *frames, size_t nframes, uint64_t count) {
  return add_at(p, frames, nframes, count, NULL);
}

/* The id of name s, or FG_NO_NAME when the profile does not hold it (nothing is added). */
static uint32_t find_name(fg_profile *p, const char *s, size_t len, uint32_t hash) {
  if (!p->name_table && grow_name_table(p) != 0) return FG_NO_NAME;
  for (uint32_t h = hash & p->name_mask, e; (e = p->name_table[h]) != 0;
       h = (h + 1) & p->name_mask) {
    const fg_name *n = &p->names[e - 1];
    if (n->hash == hash && n->len == len && memcmp(n->s, s, len) == 0) return e - 1;
  }
  return FG_NO_NAME;
}

/* The child `name` of `parent` (path hash `hash`), or FG_NO_NAME when there is none (nothing is
 * added). */
static uint32_t find_child(fg_profile *p, uint32_t parent, uint32_t name, uint32_t hash) {
  if (!p->child_table && grow_child_table(p) != 0) return FG_NO_NAME;
  for (uint32_t h = hash & p->child_mask;; h = (h + 1) & p->child_mask) {
    const fg_child_slot *e = &p->child_table[h];
    if (!e->node) return FG_NO_NAME;
    if (e->hash == hash && p->nodes[e->node].parent == parent && p->nodes[e->node].name == name)
      return e->node;
  }
}

/* fg_profile_add_capped: see flamegraph.h. */
int fg_profile_add_capped(fg_profile *p, const char *const *frames, size_t nframes, uint64_t count,
                          size_t max_nodes, const char *cut) {
  return fg_profile_add_capped_node(p, frames, nframes, count, max_nodes, cut, NULL);
}

/* fg_profile_add_capped_node: see flamegraph.h. *at may be NULL (fg_profile_add_capped). */
int fg_profile_add_capped_node(fg_profile *p, const char *const *frames, size_t nframes,
                               uint64_t count, size_t max_nodes, const char *cut, uint32_t *at) {
  if (!p || !frames || nframes == 0 || !cut || !*cut) return -EINVAL;
  if ((size_t)p->nnodes + nframes <= max_nodes) return add_at(p, frames, nframes, count, at);
  /* the part of the stack the profile already holds: it costs no node */
  uint32_t node = 0, hash = FG_ROOT_HASH;
  size_t have = 0;
  for (; have < nframes; have++) {
    if (!frames[have]) return -EINVAL;
    size_t len = strlen(frames[have]);
    uint32_t name = find_name(p, frames[have], len, fg_hash_bytes(frames[have], len));
    if (name == FG_NO_NAME) break;
    uint32_t h = fg_path_hash(hash, name), child = find_child(p, node, name, h);
    if (child == FG_NO_NAME) break;
    node = child;
    hash = h;
  }
  if ((size_t)p->nnodes + (nframes - have) <= max_nodes)
    return add_at(p, frames, nframes, count, at);
  uint32_t cname = fg_intern(p, cut, strlen(cut));
  if (cname == FG_NO_NAME) return -ENOMEM;
  /* a new cut frame costs one node; past the reserve, the root's cut frame takes the rest */
  if (find_child(p, node, cname, fg_path_hash(hash, cname)) == FG_NO_NAME &&
      (size_t)p->nnodes >= max_nodes + max_nodes / 16) {
    node = 0;
    hash = FG_ROOT_HASH;
  }
  uint32_t c = fg_child_h(p, node, cname, fg_path_hash(hash, cname));
  if (c == FG_NO_NAME) return -ENOMEM;
  int rc = fg_node_add(p, c, count, FG_MAIN);
  if (at) *at = c;
  return rc ? rc : 1;
}

/* fg_profile_nodes: see flamegraph.h. */
size_t fg_profile_nodes(const fg_profile *p) { return p ? p->nnodes : 0; }

/* fg_profile_total: see flamegraph.h. */
uint64_t fg_profile_total(const fg_profile *p, int column) {
  return (column == FG_MAIN || column == FG_BASE) ? p->total[column] : 0;
}

/* fg_profile_is_diff: see flamegraph.h. */
int fg_profile_is_diff(const fg_profile *p) { return p->diff; }

/* fg_profile_reversed: see flamegraph.h. Every node with samples of its own is one stack;
 * walking its parents yields the frames leaf first, which is the reversed stack. */
fg_profile *fg_profile_reversed(const fg_profile *p) {
  fg_profile *r = fg_profile_new();
  if (!r) return NULL;
  /* the reversed profile reuses the name ids: intern every name in order first */
  for (uint32_t i = 0; i < p->nnames; i++) {
    if (fg_intern(r, p->names[i].s, p->names[i].len) != i) goto fail;
  }
  for (uint32_t i = 1; i < p->nnodes; i++) {
    uint64_t self[2] = {fg_self(p, i, FG_MAIN), fg_self(p, i, FG_BASE)};
    if (!self[0] && !self[1]) continue;
    uint32_t at = 0, hash = FG_ROOT_HASH;
    for (uint32_t k = i; k != 0; k = p->nodes[k].parent) {
      hash = fg_path_hash(hash, p->nodes[k].name);
      at = fg_child_h(r, at, p->nodes[k].name, hash);
      if (at == FG_NO_NAME) goto fail;
    }
    for (int c = 0; c < 2; c++)
      if (self[c] && fg_node_add(r, at, self[c], c) != 0) goto fail;
  }
  r->diff = p->diff;
  return r;
fail:
  fg_profile_free(r);
  return NULL;
}

/* ---- the sorted tree view ---- */

static int name_cmp(const fg_name *a, const fg_name *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->s, b->s, n);
  if (c) return c;
  return a->len < b->len ? -1 : a->len > b->len;
}

static const fg_name *g_sort_names; /* qsort has no context argument in C11 */

static int name_id_cmp(const void *a, const void *b) {
  return name_cmp(&g_sort_names[*(const uint32_t *)a], &g_sort_names[*(const uint32_t *)b]);
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* fg_tree_build: see fg_internal.h. Children are grouped by parent with a counting sort,
 * then each group is sorted by the rank of its names (names sorted once). */
int fg_tree_build(fg_tree *t, const fg_profile *p) {
  memset(t, 0, sizeof *t);
  t->p = p;
  uint32_t n = p->nnodes;
  uint32_t *rank = malloc(((size_t)p->nnames + 1) * sizeof *rank);
  uint32_t *order = malloc(((size_t)p->nnames + 1) * sizeof *order);
  t->total = malloc((size_t)n * sizeof *t->total);
  if (p->self_base) t->total_base = malloc((size_t)n * sizeof *t->total_base);
  t->child_start = calloc((size_t)n + 1, sizeof *t->child_start);
  t->child_list = malloc(((size_t)n + 1) * sizeof *t->child_list);
  uint64_t *keys = NULL;
  fg_hint_huge(t->total, (size_t)n * sizeof *t->total);
  fg_hint_huge(t->total_base, (size_t)n * sizeof *t->total_base);
  fg_hint_huge(t->child_start, ((size_t)n + 1) * sizeof *t->child_start);
  fg_hint_huge(t->child_list, ((size_t)n + 1) * sizeof *t->child_list);
  if (!rank || !order || !t->total || !t->child_start || !t->child_list ||
      (p->self_base && !t->total_base))
    goto oom;
  for (uint32_t i = 0; i < p->nnames; i++) order[i] = i;
  g_sort_names = p->names;
  qsort(order, p->nnames, sizeof *order, name_id_cmp);
  for (uint32_t i = 0; i < p->nnames; i++) rank[order[i]] = i;

  /* depths (the totals array serves as scratch until the totals pass): parents precede
   * their children */
  uint32_t *scratch = (uint32_t *)t->total;
  scratch[0] = 0;
  t->max_depth = 0;
  for (uint32_t i = 1; i < n; i++) {
    scratch[i] = scratch[p->nodes[i].parent] + 1;
    if (scratch[i] > t->max_depth) t->max_depth = scratch[i];
  }
  /* counting sort of the nodes by parent (creation order within a parent) */
  for (uint32_t i = 1; i < n; i++) t->child_start[p->nodes[i].parent + 1]++;
  for (uint32_t i = 0; i < n; i++) t->child_start[i + 1] += t->child_start[i];
  memcpy(scratch, t->child_start, (size_t)n * sizeof *scratch); /* fill cursors */
  for (uint32_t i = 1; i < n; i++) t->child_list[scratch[p->nodes[i].parent]++] = i;
  /* sort each group by name rank: pack (rank, node) into one u64 and sort the group */
  uint32_t biggest = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = t->child_start[i + 1] - t->child_start[i];
    if (k > biggest) biggest = k;
  }
  keys = malloc(((size_t)biggest + 1) * sizeof *keys);
  if (!keys) goto oom;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t a = t->child_start[i], b = t->child_start[i + 1];
    if (b - a < 2) continue;
    for (uint32_t j = a; j < b; j++)
      keys[j - a] = (uint64_t)rank[p->nodes[t->child_list[j]].name] << 32 | t->child_list[j];
    qsort(keys, b - a, sizeof *keys, u64_cmp);
    for (uint32_t j = a; j < b; j++) t->child_list[j] = (uint32_t)keys[j - a];
  }
  /* totals: children have larger indices than their parents */
  for (uint32_t i = 0; i < n; i++) {
    t->total[i] = p->nodes[i].self;
    if (t->total_base) t->total_base[i] = p->self_base[i];
  }
  for (uint32_t i = n - 1; i > 0; i--) {
    uint32_t par = p->nodes[i].parent;
    t->total[par] += t->total[i];
    if (t->total_base) t->total_base[par] += t->total_base[i];
  }
  free(keys);
  free(rank);
  free(order);
  return 0;
oom:
  free(keys);
  free(rank);
  free(order);
  fg_tree_free(t);
  return -ENOMEM;
}

/* fg_tree_free: see fg_internal.h. */
void fg_tree_free(fg_tree *t) {
  free(t->total);
  free(t->total_base);
  free(t->child_start);
  free(t->child_list);
  memset(t, 0, sizeof *t);
}

typedef struct walk_frame {
  uint32_t node, next; /* next: index into child_list */
  uint64_t left;       /* samples left of the next child */
} walk_frame;

/* fg_tree_walk: see fg_internal.h. Iterative (stacks can be thousands deep). */
int fg_tree_walk(const fg_tree *t, fg_visit_fn visit, void *ctx) {
  size_t cap = (size_t)t->max_depth + 2;
  walk_frame *st = malloc(cap * sizeof *st);
  if (!st) return -ENOMEM;
  int rc = visit(t, 0, 0, 0, ctx);
  size_t sp = 0;
  if (rc > 0) st[sp++] = (walk_frame){0, t->child_start[0], 0};
  while (rc >= 0 && sp > 0) {
    walk_frame *f = &st[sp - 1];
    if (f->next == t->child_start[f->node + 1]) {
      sp--;
      continue;
    }
    uint32_t c = t->child_list[f->next++];
    uint64_t left = f->left;
    f->left += t->total[c];
    rc = visit(t, c, (uint32_t)sp, left, ctx);
    if (rc > 0) st[sp++] = (walk_frame){c, t->child_start[c], left};
  }
  free(st);
  return rc < 0 ? rc : 0;
}

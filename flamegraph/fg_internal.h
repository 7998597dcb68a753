/*
 * fg_internal.h — what the flamegraph/ modules share (and the unit tests look at): the
 * profile's storage, the sorted tree view the writers walk, the output buffer, frame kinds.
 * Not part of the library's public contract; nothing here is thread- or signal-safe.
 *
 * Storage: a profile is a tree of (parent, name) nodes, node 0 the synthetic root "all".
 * Names are interned once (hash table over an arena); a child is found by hashing
 * (parent, name id) into one open-addressing table — no list walks, no strcmp chains.
 * Parents always have smaller indices than their children (nodes are only appended), which
 * lets totals be summed with one backwards pass.
 */
#ifndef SAMPLER_FG_INTERNAL_H
#define SAMPLER_FG_INTERNAL_H

#include "flamegraph.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define FG_NO_NAME UINT32_MAX

typedef struct fg_name {
  const char *s; /* NUL-terminated copy in the arena */
  uint32_t len;
  uint32_t hash;
} fg_name;

typedef struct fg_node {
  uint32_t parent; /* FG_NO_NAME for the root */
  uint32_t name;   /* index in names, FG_NO_NAME for the root */
  uint64_t self;   /* samples ending here (FG_MAIN; FG_BASE is in fg_profile.self_base) */
} fg_node;

#define FG_ROOT_HASH 0x2545F491u

/* The child-table hash of the node `name` under a parent whose path hash is `parent_hash`.
 * Hashing the path (not the parent's id) lets a reader compute every slot of a stack before
 * touching the table, and prefetch them all. */
static inline uint32_t fg_path_hash(uint32_t parent_hash, uint32_t name) {
  uint64_t x = ((uint64_t)parent_hash << 32 | name) * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

typedef struct fg_arena_block fg_arena_block;

/* A child-table slot holds the node's full path hash besides its index, so a lookup that
 * misses (the common case while a big profile grows) touches one cache line, not the node
 * too; only a hash match is confirmed against the node's (parent, name). 8 bytes a slot. */
typedef struct fg_child_slot {
  uint32_t node; /* 0 (the root, never a child): empty */
  uint32_t hash;
} fg_child_slot;

/* The time axis (fg_profile_time_*): what part of the profile each thread took in each cell. */
typedef struct fg_time_entry {
  uint32_t cell, node, thread;
  uint64_t weight;
} fg_time_entry;

typedef struct fg_time_thread {
  int64_t tid;
  const char *name; /* NUL-terminated copy in the profile's arena */
  uint32_t len;
} fg_time_thread;

typedef struct fg_time_mark {
  uint64_t at_ns, dur_ns;
  const char *what; /* NUL-terminated copy in the profile's arena */
  uint32_t len;
} fg_time_mark;

typedef struct fg_time {
  int64_t start_wall_ns;
  uint64_t duration_ns, cell_ns;
  fg_time_entry *entries;
  size_t n, cap;
  fg_time_thread *threads;
  size_t nthreads, cap_threads;
  fg_time_mark *marks;
  size_t nmarks, cap_marks;
  uint64_t marks_lost;
} fg_time;

struct fg_profile {
  fg_arena_block *arena;
  fg_name *names;
  uint32_t nnames, names_cap;
  uint32_t *name_table; /* index+1, 0 = empty; NULL after fg_profile_trim */
  uint32_t name_mask;
  fg_node *nodes;
  uint64_t *self_base; /* FG_BASE samples ending at each node; NULL until a base is added */
  uint32_t nnodes, nodes_cap;
  fg_child_slot *child_table; /* keyed by (parent, name); NULL after fg_profile_trim */
  uint32_t child_mask;
  uint64_t total[2];
  int diff;
  fg_time *time; /* NULL: the profile has no time axis */
};

/* A copy of s[0..len) with a NUL in the profile's arena, or NULL when out of memory. */
char *fg_arena_strdup(fg_profile *p, const char *s, size_t len);

/* fg_profile_add_n that also gives the node the count went to (*at, when not NULL): for the
 * time axis (fg_profile_time_add). Same returns. */
int fg_profile_add_n_at(fg_profile *p, const char *const *frames, const size_t *lens,
                        size_t nframes, uint64_t count, int column, uint32_t *at);

/* Frees the time table (fg_profile_free's part). */
void fg_time_free(fg_time *t);

/* Hash of a name's bytes (FNV-1a, 32 bit). */
uint32_t fg_hash_bytes(const char *s, size_t len);

/* Interns a name; returns its id or FG_NO_NAME when out of memory. */
uint32_t fg_intern(fg_profile *p, const char *s, size_t len);
/* The same with hash = fg_hash_bytes(s, len) already computed. */
uint32_t fg_intern_h(fg_profile *p, const char *s, size_t len, uint32_t hash);

/* The child of `parent` named `name`, created when missing; FG_NO_NAME when out of memory.
 * `hash` is fg_path_hash(parent's path hash, name) (the root's is FG_ROOT_HASH): callers
 * walk down from the root and carry it. */
uint32_t fg_child_h(fg_profile *p, uint32_t parent, uint32_t name, uint32_t hash);

/* Samples ending at node n in a column. */
static inline uint64_t fg_self(const fg_profile *p, uint32_t n, int column) {
  return column == FG_MAIN ? p->nodes[n].self : p->self_base ? p->self_base[n] : 0;
}

/* fg_read_fd with the mapping window for regular files chosen (a multiple of the page
 * size); fg_read_fd uses 32 MB. For tests of lines that cross windows. */
int fg_read_fd_window(fg_profile *p, int fd, int column, fg_read_error *err, size_t window);

/* Sizes the tables and the node array for about `nodes` nodes (an estimate; a reader
 * knows the input size): growing them step by step rehashes every node each time. */
int fg_profile_reserve(fg_profile *p, size_t nodes);

/* Asks the kernel to back a big fresh allocation with huge pages (page faults were a third
 * of the time on multi-GB profiles). Only a hint: no effect on small blocks or on failure. */
void fg_hint_huge(void *ptr, size_t size);

/* Hints that the table slots for these hashes will be read soon (no effect on results). */
static inline void fg_prefetch_child(const fg_profile *p, uint32_t hash) {
  if (p->child_table) __builtin_prefetch(&p->child_table[hash & p->child_mask]);
}
static inline void fg_prefetch_name(const fg_profile *p, uint32_t hash) {
  if (p->name_table) __builtin_prefetch(&p->name_table[hash & p->name_mask]);
}
/* Second stage: the name a table slot points to, and its bytes. */
static inline void fg_prefetch_name_entry(const fg_profile *p, uint32_t hash) {
  if (!p->name_table) return;
  uint32_t e = p->name_table[hash & p->name_mask];
  if (e) {
    __builtin_prefetch(&p->names[e - 1]);
  }
}
static inline void fg_prefetch_name_bytes(const fg_profile *p, uint32_t hash) {
  if (!p->name_table) return;
  uint32_t e = p->name_table[hash & p->name_mask];
  if (e) __builtin_prefetch(p->names[e - 1].s);
}

/* Adds `count` to node's self and to the column total; -EINVAL when the total would
 * exceed INT64_MAX (JSON and SVG stay exact integers). */
int fg_node_add(fg_profile *p, uint32_t node, uint64_t count, int column);

/* The sorted tree view the writers walk: children ordered by name (bytewise), totals. */
typedef struct fg_tree {
  const fg_profile *p;
  uint64_t *total;       /* samples (FG_MAIN) in the node's subtree */
  uint64_t *total_base;  /* the same for FG_BASE; NULL unless the profile is a diff */
  uint32_t *child_start; /* children of n: child_list[child_start[n] .. child_start[n+1]) */
  uint32_t *child_list;
  uint32_t max_depth; /* deepest node (root = 0) */
} fg_tree;

/* FG_BASE samples in node n's subtree. */
static inline uint64_t fg_tree_base(const fg_tree *t, uint32_t n) {
  return t->total_base ? t->total_base[n] : 0;
}

/* Builds the view; returns 0 or -ENOMEM. */
int fg_tree_build(fg_tree *t, const fg_profile *p);
void fg_tree_free(fg_tree *t);

/* Preorder walk. visit() gets the node, its depth and the samples (column FG_MAIN) to its
 * left within the root, and returns 1 to descend into the node's children, 0 to skip them,
 * <0 to stop the walk with that code. Returns 0 or the code. */
typedef int (*fg_visit_fn)(const fg_tree *t, uint32_t node, uint32_t depth, uint64_t left,
                           void *ctx);
int fg_tree_walk(const fg_tree *t, fg_visit_fn visit, void *ctx);

/* Frame kinds, from the name (see fg_kind_of for the rule). NATIVE is C (and anything not
 * recognised), CPP a C++ symbol (the JVM's own code), SYNTHETIC a pseudo-frame of the
 * profiler or the JVM's state ("[GC active]"), THREAD a thread root "[name tid=N]". */
typedef enum fg_kind {
  FG_KIND_NATIVE = 0,
  FG_KIND_JAVA,
  FG_KIND_JIT,
  FG_KIND_INLINED,
  FG_KIND_INTERPRETED,
  FG_KIND_KERNEL,
  FG_KIND_SYNTHETIC,
  FG_KIND_CPP,
  FG_KIND_THREAD,
  FG_KIND_ALLOC, /* _[a]: the class an allocation profile's leaf allocated */
  FG_KIND_LOCK,  /* _[l]: the class of the lock a lock profile's stack waited for */
  FG_KIND_COUNT
} fg_kind;

/* The kind of a frame name; *display_len gets the length without the kind suffix. */
fg_kind fg_kind_of(const char *s, size_t len, size_t *display_len);

/* What a kind looks like (fg_kind.c, indexed by fg_kind): its id in the page and the SVG
 * legend, the label of a frame's details, the name suffix that marks it ("" when none), and
 * the java palette's colour — base plus up to spread times a random number in [0,1). */
typedef struct fg_kind_info {
  const char *id, *label, *suffix;
  unsigned char base[3], spread[3];
} fg_kind_info;
extern const fg_kind_info fg_kinds[FG_KIND_COUNT];

/* The java palette's legend keys, in display order; kinds in one key share a colour. */
#define FG_KBIT(k) (1u << (k))
typedef struct fg_legend_key {
  const char *id, *label, *help;
  unsigned kinds; /* FG_KBIT per fg_kind */
} fg_legend_key;
extern const fg_legend_key fg_legend[];
extern const size_t fg_legend_count;

/* Buffered output to a FILE*; any write error sticks in `err` (-EIO). */
typedef struct fg_buf {
  FILE *out;
  char *data;
  size_t len, cap;
  int err;
} fg_buf;

int fg_buf_init(fg_buf *b, FILE *out);
/* Flushes and frees; returns 0 or the first error. */
int fg_buf_finish(fg_buf *b);
void fg_buf_put(fg_buf *b, const char *s, size_t n);
void fg_buf_puts(fg_buf *b, const char *s);
void fg_buf_putc(fg_buf *b, char c);
void fg_buf_u64(fg_buf *b, uint64_t v);
void fg_buf_i64(fg_buf *b, int64_t v);
/* A non-negative-or-negative fixed-point number with `decimals` digits, trailing zeros
 * and a trailing '.' removed ("12.5", "3"). */
void fg_buf_fixed(fg_buf *b, double v, int decimals);
/* Integer with ',' between thousands ("1,234,567"). */
void fg_buf_u64_grouped(fg_buf *b, uint64_t v);
/* XML text/attribute escaping: & < > " ' as entities, invalid UTF-8 and XML-forbidden
 * control characters as U+FFFD. */
void fg_buf_xml(fg_buf *b, const char *s, size_t n);
/* JSON string (quotes included): " \ and controls escaped, '<' as \u003c (safe inside a
 * <script> element), invalid UTF-8 as U+FFFD. */
void fg_buf_json(fg_buf *b, const char *s, size_t n);

/* Writes the page's "time" member (`,\n"time":{...}`, schema in flamegraph/README.md) when p
 * has a time table, nothing otherwise. page_of[node] is the node's index in the page's nodes,
 * or FG_NO_NAME when it was pruned (its entries then go to the nearest kept ancestor, marked
 * as pruned). At most max_entries entries (0: no limit): cells are merged until they fit.
 * Returns 0 or -ENOMEM. */
int fg_time_write_page(fg_buf *b, const fg_profile *p, const uint32_t *page_of, size_t max_entries);

/* Length of the valid UTF-8 sequence at s[0..n) (1..4), or 0 when invalid. */
size_t fg_utf8_len(const unsigned char *s, size_t n);

/* The embedded files (generated from flamegraph/page/viewer.html and svg_script.js). */
extern const unsigned char fg_viewer_html[];
extern const size_t fg_viewer_html_len;
extern const unsigned char fg_svg_script[];
extern const size_t fg_svg_script_len;

/* Makes *a (elements of elem bytes, *cap of them) hold at least need, doubling from 64: a
 * reader's growable scratch arrays (fg_pprof.c, fg_jfr.c). 0 or -ENOMEM (*a unchanged). */
static inline int fg_grow(void **a, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap * 2 : 64;
  while (c < need) c *= 2;
  void *p = realloc(*a, c * elem);
  if (!p) return -ENOMEM;
  *a = p;
  *cap = c;
  return 0;
}

#endif

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

#include <stdint.h>

#define FG_NO_NAME UINT32_MAX

typedef struct fg_name {
  const char *s; /* NUL-terminated copy in the arena */
  uint32_t len;
  uint32_t hash;
} fg_name;

typedef struct fg_node {
  uint32_t parent; /* FG_NO_NAME for the root */
  uint32_t name;   /* index in names, FG_NO_NAME for the root */
  uint64_t self[2]; /* samples ending here: [FG_MAIN], [FG_BASE] */
} fg_node;

typedef struct fg_arena_block fg_arena_block;

struct fg_profile {
  fg_arena_block *arena;
  fg_name *names;
  uint32_t nnames, names_cap;
  uint32_t *name_table; /* index+1, 0 = empty */
  uint32_t name_mask;
  fg_node *nodes;
  uint32_t nnodes, nodes_cap;
  uint32_t *child_table; /* node index+1, 0 = empty; keyed by (parent, name) */
  uint32_t child_mask;
  uint64_t total[2];
  int diff;
};

/* Hash of a name's bytes (FNV-1a, 32 bit). */
uint32_t fg_hash_bytes(const char *s, size_t len);

/* Interns a name; returns its id or FG_NO_NAME when out of memory. */
uint32_t fg_intern(fg_profile *p, const char *s, size_t len);

/* The child of `parent` named `name`, created when missing; FG_NO_NAME when out of memory. */
uint32_t fg_child(fg_profile *p, uint32_t parent, uint32_t name);

/* Adds `count` to node's self and to the column total; -EINVAL when the total would
 * exceed INT64_MAX (JSON and SVG stay exact integers). */
int fg_node_add(fg_profile *p, uint32_t node, uint64_t count, int column);

/* The sorted tree view the writers walk: children ordered by name (bytewise), totals. */
typedef struct fg_tree {
  const fg_profile *p;
  uint64_t *total;        /* [2 * node + column]: samples in the node's subtree */
  uint32_t *child_start;  /* children of n: child_list[child_start[n] .. child_start[n+1]) */
  uint32_t *child_list;
  uint32_t *subtree_size; /* nodes in the subtree, itself included */
  uint32_t max_depth;     /* deepest node (root = 0) */
} fg_tree;

/* Builds the view; returns 0 or -ENOMEM. */
int fg_tree_build(fg_tree *t, const fg_profile *p);
void fg_tree_free(fg_tree *t);

/* Preorder walk. visit() gets the node, its depth and the samples (column FG_MAIN) to its
 * left within the root, and returns 1 to descend into the node's children, 0 to skip them,
 * <0 to stop the walk with that code. Returns 0 or the code. */
typedef int (*fg_visit_fn)(const fg_tree *t, uint32_t node, uint32_t depth, uint64_t left,
                           void *ctx);
int fg_tree_walk(const fg_tree *t, fg_visit_fn visit, void *ctx);

/* Frame kinds, from the name (see fg_kind_of for the rule). */
typedef enum fg_kind {
  FG_KIND_NATIVE = 0, FG_KIND_JAVA, FG_KIND_JIT, FG_KIND_INLINED, FG_KIND_INTERPRETED,
  FG_KIND_KERNEL, FG_KIND_SYNTHETIC
} fg_kind;

/* The kind of a frame name; *display_len gets the length without the kind suffix. */
fg_kind fg_kind_of(const char *s, size_t len, size_t *display_len);

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

/* Length of the valid UTF-8 sequence at s[0..n) (1..4), or 0 when invalid. */
size_t fg_utf8_len(const unsigned char *s, size_t n);

/* The embedded files (generated from flamegraph/viewer/viewer.html and svg_script.js). */
extern const unsigned char fg_viewer_html[];
extern const size_t fg_viewer_html_len;
extern const unsigned char fg_svg_script[];
extern const size_t fg_svg_script_len;

#endif

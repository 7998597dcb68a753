/*
 * flamegraph.h — folded stacks in, flame graphs out. A library the agent links and the
 * `flamegraph` command-line tool is built on.
 *
 * CONTRACT WITH THE AGENT (agent/ calls exactly these; keep their signatures):
 *   fg_profile_new / fg_profile_add / fg_profile_add_capped(_node) / fg_profile_free,
 *   fg_profile_time_init / _thread / _add (the HTML's time axis), fg_options_init,
 *   fg_write_folded / fg_write_svg / fg_write_html, fg_write_json_string.
 * The agent builds a profile from its own trace table at dump time (outside any signal
 * handler, malloc allowed) and writes it to a FILE* it opened (temp file + rename is the
 * agent's job). Frame names arrive as the agent prints them, kind suffix included
 * (`java/lang/String.hashCode_[j]`, `[unknown Java]`, `[main tid=123]`).
 *
 * Beyond the contract: the folded reader (fg_read_*), differential profiles (two sample
 * columns: "base" = the first input, "main" = the second), and the rendering options.
 * No function here is async-signal-safe; a profile is not thread-safe (one owner at a time).
 */
#ifndef SAMPLER_FLAMEGRAPH_H
#define SAMPLER_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FG_VERSION "1.0.0"

typedef struct fg_profile fg_profile;

/* A new empty profile, or NULL when out of memory. */
fg_profile *fg_profile_new(void);
void fg_profile_free(fg_profile *p);

/* Adds one stack (frames[0] is the root) with `count` samples. Frame strings are copied.
 * Returns 0 or -ENOMEM / -EINVAL. */
int fg_profile_add(fg_profile *p, const char *const *frames, size_t nframes, uint64_t count);

/* Sample columns of a profile. FG_MAIN is what fg_profile_add fills; FG_BASE is the
 * baseline of a differential profile (the first of two inputs). */
enum { FG_MAIN = 0, FG_BASE = 1 };

/* Like fg_profile_add, with explicit frame lengths (names need not be NUL-terminated) and
 * column. Adding anything to FG_BASE makes the profile differential.
 * Returns 0 or -ENOMEM / -EINVAL (empty frame name, nframes == 0, bad column). */
int fg_profile_add_n(fg_profile *p, const char *const *frames, const size_t *lens, size_t nframes,
                     uint64_t count, int column);

/* Like fg_profile_add, for a profile that must stay within max_nodes frames (a bound on its
 * memory: ~48 bytes a frame while built and written). A stack whose new frames would take it
 * past that adds its count under the longest part of it the profile already holds, in a child
 * frame named `cut`: one more frame each, up to max_nodes + max_nodes / 16 frames in all, past
 * which such counts go to the root's `cut` child. Totals are kept. Add the heaviest stacks
 * first: they are drawn whole. Returns 0 (added whole), 1 (added cut) or -ENOMEM / -EINVAL. */
int fg_profile_add_capped(fg_profile *p, const char *const *frames, size_t nframes, uint64_t count,
                          size_t max_nodes, const char *cut);

/* fg_profile_add_capped that also says where the count went: *node gets the frame (an id of
 * this profile, stable while it lives) the count was added to — the stack's leaf, or the `cut`
 * frame it went under. For the time axis (fg_profile_time_add). Same returns. */
int fg_profile_add_capped_node(fg_profile *p, const char *const *frames, size_t nframes,
                               uint64_t count, size_t max_nodes, const char *cut, uint32_t *node);

/* The time axis (optional; the HTML page draws it as a heat map, the other writers ignore
 * it): when each part of the profile was taken, in cells of cell_ns from start_wall_ns (ns
 * since the epoch), over duration_ns. Starts (or restarts, empty) the profile's time table.
 * Returns 0, -EINVAL (cell_ns 0) or -ENOMEM. */
int fg_profile_time_init(fg_profile *p, int64_t start_wall_ns, uint64_t duration_ns,
                         uint64_t cell_ns);
/* Adds a thread to the time table (the name is copied); returns its index (>= 0) for
 * fg_profile_time_add, -EINVAL (no time table) or -ENOMEM. */
int fg_profile_time_thread(fg_profile *p, int64_t tid, const char *name);
/* `weight` (in the profile's unit) of frame `node` (from fg_profile_add_capped_node) taken by
 * thread `thread` in cell `cell`. The entries of one node should add up to its own count (the
 * page draws a range from them). Returns 0 or -EINVAL (no time table, unknown node or thread)
 * or -ENOMEM. */
int fg_profile_time_add(fg_profile *p, uint32_t cell, uint32_t node, uint32_t thread,
                        uint64_t weight);

/* A moment (or span) of the run for the time axis, at_ns from its start for dur_ns (0: an
 * instant), named `what` (copied; the page draws marks of one name alike, e.g. "GC pause").
 * Returns 0 or -EINVAL (no time table, empty name) or -ENOMEM. */
int fg_profile_time_mark(fg_profile *p, uint64_t at_ns, uint64_t dur_ns, const char *what);
/* How many marks the source could not keep (the page says so). */
void fg_profile_time_marks_lost(fg_profile *p, uint64_t n);

/* The frames (tree nodes, the root included) the profile holds. */
size_t fg_profile_nodes(const fg_profile *p);

/* Sum of all samples in a column. */
uint64_t fg_profile_total(const fg_profile *p, int column);

/* 1 if anything was added to FG_BASE (a differential profile), else 0. */
int fg_profile_is_diff(const fg_profile *p);

/* Frees the lookup tables (about a third of a big profile's memory) before writing; a later
 * add rebuilds them. Nothing else changes. */
void fg_profile_trim(fg_profile *p);

/* A new profile holding every stack of `p` reversed (leaf first: "merge at the leaves"),
 * both columns; NULL when out of memory. */
fg_profile *fg_profile_reversed(const fg_profile *p);

/* The deepest stack the readers accept (folded and pprof), in frames; a deeper one is an
 * error that names this limit, not a truncated stack (see flamegraph/README.md "Limits").
 * 8 times the agent's deepest (depth=8192): no real profile comes near, while a line of
 * millions of frames would cost gigabytes in the reader and be undrawable. */
#define FG_MAX_DEPTH 65536

/* Reader errors: the 1-based line number and what is wrong with it. */
typedef struct fg_read_error {
  unsigned long line; /* 0 when the error is not about a line (I/O, memory) */
  char msg[200];
} fg_read_error;

/* Parses folded stacks from `buf` (the whole input; the last line may lack its LF) into
 * `column` of `p`. Grammar and decided behaviours (each tested):
 *   line   := frame (';' frame)* ' ' count, frames may contain spaces (the count is the text
 *             after the LAST space); kind suffixes `_[j]` `_[i]` `_[0]` `_[k]` are part of
 *             the name.
 *   CRLF line ends: accepted (the CR is dropped). Trailing spaces/tabs: ignored.
 *   Blank lines (empty or whitespace only): skipped.
 *   Two counts (`stack BASE NEW`, the differential form fg_write_folded writes for a diff,
 *   as difffolded does): a line whose word before the count is a whole number too is read
 *   into both columns (BASE into FG_BASE) and makes the profile differential; an error when
 *   reading into FG_BASE. (So a last frame cannot end in " DIGITS".)
 *   count: decimal digits, 0 allowed (adds nothing), at most 2^63-1 in total.
 *   depth: at most FG_MAX_DEPTH frames in a line.
 *   Errors (return -EINVAL, err filled, nothing partial is trusted by the caller):
 *     missing count, fractional count, negative count, count too large, empty frame
 *     name (";;", leading or trailing ';'), NUL byte, invalid UTF-8, a stack deeper than
 *     FG_MAX_DEPTH.
 * Returns 0, -EINVAL (err->line, err->msg set) or -ENOMEM. */
int fg_read_buffer(fg_profile *p, const char *buf, size_t len, int column, fg_read_error *err);

/* Like fg_read_buffer for a file descriptor: a regular file at offset 0 is mapped read-only
 * in 32 MB windows, anything else (pipes, stdin, a file already partly read) is read in 4 MB
 * chunks; memory stays bounded by the window or the longest line. Returns 0, -EINVAL,
 * -ENOMEM, -EIO (a later window cannot be mapped) or -errno of read(). */
int fg_read_fd(fg_profile *p, int fd, int column, fg_read_error *err);

/* Palettes (flamegraph.pl's familiar set, plus java by frame kind). */
typedef enum fg_palette {
  FG_PAL_HOT = 0,
  FG_PAL_MEM,
  FG_PAL_IO,
  FG_PAL_JAVA,
  FG_PAL_RED,
  FG_PAL_GREEN,
  FG_PAL_BLUE,
  FG_PAL_AQUA,
  FG_PAL_YELLOW,
  FG_PAL_PURPLE,
  FG_PAL_ORANGE,
  FG_PAL_COUNT
} fg_palette;

/* Palette by name ("hot", "java", ...); returns 0 and sets *out, or -EINVAL. */
int fg_palette_parse(const char *name, fg_palette *out);
/* The palette's name. */
const char *fg_palette_name(fg_palette pal);

typedef struct fg_options {
  const char *title;      /* NULL: "Flame Graph" ("Differential Flame Graph" for a diff) */
  const char *subtitle;   /* NULL: none */
  const char *count_name; /* NULL: "samples" */
  int width;              /* px, SVG; 0: 1200 */
  int frame_height;       /* px per frame, SVG; 0: 16 */
  double min_width;       /* SVG: omit frames narrower than this; default 0.1 (px) */
  int min_width_pct;      /* 1: min_width is a percentage of all samples, not px */
  fg_palette palette;     /* default FG_PAL_HOT */
  int hash;               /* 1: colour by a hash of the name (same name, same colour) */
  int reverse;            /* 1: reverse stacks before drawing (merge at the leaves) */
  int inverted;           /* 1: icicle graph (root at the top) */
  int diff_absolute;      /* diff colours: 0 compare shares of each total, 1 raw counts */
  double html_prune;      /* HTML: leave out subtrees below this fraction of the total
                             (recorded in "pruned"); default 1e-5; 0 keeps everything */
  size_t html_max_nodes;  /* HTML: at most this many nodes, the largest kept (the cut is
                             raised until they fit); default 200000; 0: no limit */
  size_t html_max_time;   /* HTML: at most this many time entries; past it cells are merged
                             (2, 5, 10, 20, 50 ... at a time; the page says so); default
                             1000000 (~14 MB of page); 0: no limit */
} fg_options;

/* Sets every field to its default. */
void fg_options_init(fg_options *o);

/* Each writes the whole profile to `out`; returns 0 or a negative errno-style code
 * (-EIO on a write error, -ENOMEM, -EINVAL for bad options).
 * fg_write_folded: sorted stacks (frame by frame, bytewise), root first, ';'-joined, one
 * space, the count, LF; stacks with 0 samples left out. A differential profile is written
 * as `stack base main` (two counts, the difffolded form flamegraph.pl reads). */
int fg_write_folded(FILE *out, const fg_profile *p);
int fg_write_svg(FILE *out, const fg_profile *p, const fg_options *o);
int fg_write_html(FILE *out, const fg_profile *p, const fg_options *o);
/* One page of several profiles (the agent's events, event=cpu,alloc,lock): ps[i] written with
 * os[i] (NULL: the defaults for all) under the name events[i] ("cpu"); the page shows one at a
 * time, chosen by its event selector (the URL fragment's e=; the first by default). */
int fg_write_html_events(FILE *out, const fg_profile *const *ps, const fg_options *os,
                         const char *const *events, size_t n);

/* Writes the n bytes at s to out as one JSON string, as the page's data carries names: quoted;
 * '"', '\\', control characters and <>& escaped; a byte that forms no UTF-8 character written
 * as U+FFFD, so the result is JSON (UTF-8) whatever the bytes. Returns 0, -EIO or -ENOMEM. */
int fg_write_json_string(FILE *out, const char *s, size_t n);

/* The kind of frame name s (n bytes) by the flame graphs' rule (flamegraph/README.md), as the
 * page names it: "jit", "inlined", "interpreted", "java" (a Java name with no kind recorded),
 * "native", "cpp", "kernel", "pseudo" or "thread"; *display_len gets the name's length without
 * its kind suffix ("_[j]" ...). Thread-safe. */
const char *fg_frame_kind(const char *s, size_t n, size_t *display_len);

#endif

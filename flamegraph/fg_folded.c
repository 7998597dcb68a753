/*
 * fg_folded.c — the folded-stack format both ways: the strict reader (buffer or fd) and
 * the deterministic writer.
 *
 * Reader: every line is validated completely before any of it reaches the profile, and any
 * line it cannot read stops the read with the line number and the reason (see flamegraph.h
 * for the grammar and each decided behaviour). Speed: a line's leading frames are compared
 * with the previous line's path first (sorted inputs share long prefixes), only new frames
 * are hashed. The fd reader works in large chunks; memory is bounded by the longest line, and
 * a line holds at most FG_MAX_DEPTH frames (a line of millions of frames cost gigabytes).
 */
#include "fg_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct frame_ref {
  uint32_t off, len;
} frame_ref;

typedef struct reader {
  fg_profile *p;
  int column;
  unsigned long line;
  fg_read_error *err;
  frame_ref *frames;
  uint32_t *path; /* the previous line's nodes, by depth */
  uint32_t *hash, *ids;
  size_t cap, path_len;
} reader;

static int fail(reader *r, const char *fmt, ...) {
  if (r->err) {
    r->err->line = r->line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

static int grow(reader *r) {
  size_t cap = r->cap ? r->cap * 2 : 256;
  frame_ref *f = realloc(r->frames, cap * sizeof *f);
  if (!f) return -ENOMEM;
  r->frames = f;
  uint32_t *pa = realloc(r->path, cap * sizeof *pa);
  if (!pa) return -ENOMEM;
  r->path = pa;
  pa = realloc(r->hash, cap * sizeof *pa);
  if (!pa) return -ENOMEM;
  r->hash = pa;
  pa = realloc(r->ids, cap * sizeof *pa);
  if (!pa) return -ENOMEM;
  r->ids = pa;
  r->cap = cap;
  return 0;
}

/* Quotes at most 24 bytes of `s` for an error message (controls shown as '?'). */
static const char *excerpt(const char *s, size_t n, char out[32]) {
  size_t k = n > 24 ? 24 : n, j = 0;
  for (size_t i = 0; i < k; i++) {
    unsigned char c = (unsigned char)s[i];
    out[j++] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
  }
  if (k < n) {
    out[j++] = '.';
    out[j++] = '.';
  }
  out[j] = '\0';
  return out;
}

static int parse_count(reader *r, const char *s, size_t n, uint64_t *out) {
  char ex[32];
  if (n == 0) return fail(r, "missing sample count at the end of the line");
  if (s[0] == '-') {
    int digits = n > 1;
    for (size_t i = 1; i < n; i++)
      if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) digits = 0;
    if (digits)
      return fail(r, "negative count '%s' (counts are whole numbers of samples, >= 0)",
                  excerpt(s, n, ex));
  }
  uint64_t v = 0;
  size_t i = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10)
      return fail(r, "count '%s' is too large (at most 9223372036854775807)", excerpt(s, n, ex));
    v = v * 10 + d;
  }
  if (i == n) {
    *out = v;
    return 0;
  }
  if (i > 0 && s[i] == '.') {
    size_t j = i + 1;
    while (j < n && s[j] >= '0' && s[j] <= '9') j++;
    if (j == n)
      return fail(r, "fractional count '%s' (counts are whole numbers of samples)",
                  excerpt(s, n, ex));
  }
  if (i == 0)
    return fail(r,
                "missing sample count at the end of the line (last word '%s' is not a "
                "number)",
                excerpt(s, n, ex));
  return fail(r, "invalid count '%s' (expected a whole number after the last space)",
              excerpt(s, n, ex));
}

/* 1 when 8 bytes hold no ';', no NUL and no byte >= 0x80 (the common case, checked a word
 * at a time). */
static inline int plain8(const unsigned char *u) {
  uint64_t w;
  memcpy(&w, u, 8);
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  uint64_t semi = w ^ (ones * ';');
  uint64_t zero_or_semi = ((w - ones) & ~w) | ((semi - ones) & ~semi);
  return ((zero_or_semi | w) & high) == 0;
}

/* One line without its LF. Returns 0 or -EINVAL / -ENOMEM. */
static int read_line(reader *r, const char *s, size_t n) {
  while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
  size_t lead = 0;
  while (lead < n && (s[lead] == ' ' || s[lead] == '\t')) lead++;
  if (lead == n) return 0; /* blank */
  const char *sp = NULL;
  for (size_t i = n; i > 0; i--)
    if (s[i - 1] == ' ') {
      sp = s + i - 1;
      break;
    }
  if (!sp) {
    char ex[32];
    if (memchr(s, ';', n) || !(s[0] >= '0' && s[0] <= '9'))
      return fail(r,
                  "missing sample count at the end of the line (expected "
                  "'frame;frame;... COUNT', got '%s')",
                  excerpt(s, n, ex));
    return fail(r, "no frames before the count");
  }
  uint64_t count = 0;
  int rc = parse_count(r, sp + 1, (size_t)(s + n - sp - 1), &count);
  if (rc) return rc;
  size_t stack_len = (size_t)(sp - s);
  if (stack_len == 0) return fail(r, "no frames before the count");
  /* differential form `stack BASE NEW` (what the writer emits for a diff, and difffolded):
   * the word before the count is a whole number too */
  int two_counts = 0;
  uint64_t base_count = 0;
  {
    size_t k = stack_len;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k < stack_len && k > 1 && s[k - 1] == ' ') {
      two_counts = 1;
      rc = parse_count(r, s + k, stack_len - k, &base_count);
      if (rc) return rc;
      if (r->column == FG_BASE)
        return fail(r, "a differential line (two counts) cannot be one side of a diff");
      stack_len = k - 1;
    }
  }

  /* split and validate: ';' separates, no empty frame, no NUL, valid UTF-8 */
  size_t nf = 0, start = 0, i = 0;
  const unsigned char *u = (const unsigned char *)s;
  while (i <= stack_len) {
    if (i == stack_len || u[i] == ';') {
      if (i == start)
        return fail(r, "empty frame name (frame %zu; check for ';;' or a ';' at either end)",
                    nf + 1);
      if (nf == FG_MAX_DEPTH)
        return fail(r, "a stack deeper than %d frames (the limit, FG_MAX_DEPTH)", FG_MAX_DEPTH);
      if (nf == r->cap && grow(r) != 0) return -ENOMEM;
      if (i - start >= UINT32_MAX) return fail(r, "frame name too long");
      r->frames[nf++] = (frame_ref){(uint32_t)start, (uint32_t)(i - start)};
      start = ++i;
      continue;
    }
    if (i + 8 <= stack_len && plain8(u + i)) {
      i += 8;
      continue;
    }
    if (u[i] == 0) return fail(r, "NUL byte at column %zu", i + 1);
    if (u[i] >= 0x80) {
      size_t k = fg_utf8_len(u + i, stack_len - i);
      if (!k) return fail(r, "invalid UTF-8 (byte 0x%02x at column %zu)", u[i], i + 1);
      i += k;
    } else {
      i++;
    }
  }

  /* insert, reusing the previous line's path while the frames match */
  fg_profile *p = r->p;
  uint32_t node = 0;
  size_t d = 0;
  for (; d < nf && d < r->path_len; d++) {
    const fg_name *nm = &p->names[p->nodes[r->path[d]].name];
    if (nm->len != r->frames[d].len || memcmp(nm->s, s + r->frames[d].off, nm->len) != 0) break;
    node = r->path[d];
  }
  r->path_len = d;
  /* the new frames: hash them all and prefetch their name slots, intern, then compute every
   * child slot and prefetch those before the dependent lookups (random inputs miss the cache
   * on nearly every frame; this overlaps the misses) */
  size_t d0 = d;
  for (; d < nf; d++) {
    r->hash[d] = fg_hash_bytes(s + r->frames[d].off, r->frames[d].len);
    fg_prefetch_name(p, r->hash[d]);
  }
  for (d = d0; d < nf; d++) fg_prefetch_name_entry(p, r->hash[d]);
  for (d = d0; d < nf; d++) fg_prefetch_name_bytes(p, r->hash[d]);
  for (d = d0; d < nf; d++) {
    r->ids[d] = fg_intern_h(p, s + r->frames[d].off, r->frames[d].len, r->hash[d]);
    if (r->ids[d] == FG_NO_NAME) return -ENOMEM;
  }
  uint32_t ph = d0 ? r->hash[d0 - 1] : FG_ROOT_HASH;
  for (d = d0; d < nf; d++) {
    ph = fg_path_hash(ph, r->ids[d]);
    r->hash[d] = ph;
    fg_prefetch_child(p, ph);
  }
  for (d = d0; d < nf; d++) {
    node = fg_child_h(p, node, r->ids[d], r->hash[d]);
    if (node == FG_NO_NAME) return -ENOMEM;
    r->path[d] = node;
  }
  r->path_len = nf;
  if (fg_node_add(p, node, count, r->column) != 0 ||
      (two_counts && fg_node_add(p, node, base_count, FG_BASE) != 0))
    return fail(r, "the sample total exceeds 9223372036854775807");
  return 0;
}

/* Reads the complete lines in s[0..n); *used gets the bytes consumed. With `last`, a final
 * line without LF is read too. */
static int read_lines(reader *r, const char *s, size_t n, int last, size_t *used) {
  size_t pos = 0;
  while (pos < n) {
    const char *nl = memchr(s + pos, '\n', n - pos);
    if (!nl && !last) break;
    size_t end = nl ? (size_t)(nl - s) : n;
    r->line++;
    int rc = read_line(r, s + pos, end - pos);
    if (rc) {
      *used = pos;
      return rc;
    }
    pos = nl ? end + 1 : n;
  }
  *used = pos;
  return 0;
}

static void reader_free(reader *r) {
  free(r->frames);
  free(r->path);
  free(r->hash);
  free(r->ids);
}

static int check_args(fg_profile *p, int column, fg_read_error *err) {
  if (err) {
    err->line = 0;
    err->msg[0] = '\0';
  }
  if (!p || (column != FG_MAIN && column != FG_BASE)) {
    if (err) snprintf(err->msg, sizeof err->msg, "invalid arguments");
    return -EINVAL;
  }
  return 0;
}

static int oom(fg_read_error *err, int rc) {
  if (rc == -ENOMEM && err) {
    err->line = 0;
    snprintf(err->msg, sizeof err->msg, "out of memory");
  }
  return rc;
}

/* fg_read_buffer: see flamegraph.h. */
int fg_read_buffer(fg_profile *p, const char *buf, size_t len, int column, fg_read_error *err) {
  int rc = check_args(p, column, err);
  if (rc) return rc;
  reader r = {.p = p, .column = column, .err = err};
  size_t used;
  rc = read_lines(&r, buf, len, 1, &used);
  reader_free(&r);
  return oom(err, rc);
}

/* Reads `size` bytes of a regular file through read-only mappings of about `window` bytes
 * (no copy into a buffer: copying was a sixth of the time on a 1.2 GB input); a line that
 * crosses a window's end is read again from the next window, a line longer than the window
 * doubles it. Returns 1 when the file cannot be mapped at all (the caller reads it instead),
 * else 0, -EINVAL, -ENOMEM or -EIO. Hazard: a file truncated while it is read raises SIGBUS. */
static int read_mapped(reader *r, int fd, uint64_t size, size_t window) {
  const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t off = 0; /* the first byte not read yet */
  int first = 1;
  while (off < size) {
    uint64_t base = off & ~(page - 1);
    size_t skip = (size_t)(off - base), len = window;
    if (base + len > size) len = (size_t)(size - base);
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, (off_t)base);
    if (m == MAP_FAILED) {
      if (first) return 1;
      if (r->err) {
        r->err->line = 0;
        snprintf(r->err->msg, sizeof r->err->msg, "cannot map the input: %s", strerror(errno));
      }
      return -EIO;
    }
    first = 0;
    int last = base + len == size;
    size_t used;
    int rc = read_lines(r, (const char *)m + skip, len - skip, last, &used);
    munmap(m, len);
    if (rc) return rc;
    if (used == 0 && !last) window *= 2; /* one line longer than the window */
    off += used;
    if (last) break;
  }
  return 0;
}

/* Internal (fg_internal.h): fg_read_fd with a chosen mapping window, for tests. */
int fg_read_fd_window(fg_profile *p, int fd, int column, fg_read_error *err, size_t window) {
  int rc = check_args(p, column, err);
  if (rc) return rc;
  reader r = {.p = p, .column = column, .err = err};
  /* a regular file's size bounds its frames: size the tables once (~1 node per 32 bytes,
   * the shape of distinct deep stacks; sorted or repetitive inputs need far fewer) */
  struct stat st;
  int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && st.st_size > (1 << 20) &&
      fg_profile_reserve(p, p->nnodes + (size_t)st.st_size / 32) != 0)
    rc = -ENOMEM;
  if (rc == 0 && regular && st.st_size > 0 && lseek(fd, 0, SEEK_CUR) == 0) {
    rc = read_mapped(&r, fd, (uint64_t)st.st_size, window);
    if (rc != 1) {
      reader_free(&r);
      return oom(err, rc);
    }
    rc = 0; /* not mappable: read it */
  }
  size_t cap = 4u << 20, len = 0;
  char *buf = malloc(cap);
  if (!buf) rc = -ENOMEM;
  while (rc == 0) {
    if (len == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        rc = -ENOMEM;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t got = read(fd, buf + len, cap - len);
    if (got < 0) {
      if (errno == EINTR) continue;
      rc = -errno;
      if (err) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "read error: %s", strerror(errno));
      }
      break;
    }
    len += (size_t)got;
    size_t used;
    rc = read_lines(&r, buf, len, got == 0, &used);
    if (rc || got == 0) break;
    memmove(buf, buf + used, len - used);
    len -= used;
  }
  free(buf);
  reader_free(&r);
  return oom(err, rc);
}

/* fg_read_fd: see flamegraph.h. Regular files are mapped window by window, pipes read. */
int fg_read_fd(fg_profile *p, int fd, int column, fg_read_error *err) {
  return fg_read_fd_window(p, fd, column, err, 32u << 20);
}

/* ---- writer ---- */

typedef struct fold_ctx {
  fg_buf *b;
  uint32_t *path;
} fold_ctx;

static int fold_visit(const fg_tree *t, uint32_t node, uint32_t depth, uint64_t left, void *ctx) {
  (void)left;
  fold_ctx *c = ctx;
  const fg_profile *p = t->p;
  if (node == 0) return 1;
  c->path[depth - 1] = node;
  uint64_t self = fg_self(p, node, FG_MAIN), base = fg_self(p, node, FG_BASE);
  if (self || base) {
    for (uint32_t d = 0; d < depth; d++) {
      const fg_name *nm = &p->names[p->nodes[c->path[d]].name];
      if (d) fg_buf_putc(c->b, ';');
      fg_buf_put(c->b, nm->s, nm->len);
    }
    fg_buf_putc(c->b, ' ');
    if (p->diff) {
      fg_buf_u64(c->b, base);
      fg_buf_putc(c->b, ' ');
    }
    fg_buf_u64(c->b, self);
    fg_buf_putc(c->b, '\n');
  }
  return c->b->err ? c->b->err : 1;
}

/* fg_write_folded: see flamegraph.h. */
int fg_write_folded(FILE *out, const fg_profile *p) {
  if (!out || !p) return -EINVAL;
  fg_tree t;
  int rc = fg_tree_build(&t, p);
  if (rc) return rc;
  fg_buf b;
  fold_ctx c = {&b, malloc(((size_t)t.max_depth + 1) * sizeof(uint32_t))};
  if (!c.path || fg_buf_init(&b, out) != 0) {
    free(c.path);
    fg_tree_free(&t);
    return -ENOMEM;
  }
  rc = fg_tree_walk(&t, fold_visit, &c);
  int rc2 = fg_buf_finish(&b);
  free(c.path);
  fg_tree_free(&t);
  return rc ? rc : rc2;
}

/*
 * diskcache.c — entries kept on disk between runs (see diskcache.h). A file is a header (what
 * the entry was made from, the sizes of its two parts, a checksum of them) followed by the
 * kind's bytes: a short fixed part (its counts) and the rest, laid out as the kind keeps it in
 * memory.
 */
#include "diskcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objects.h"

#define ID_MAX OBJECTS_BUILD_ID_MAX
#define FILE_MAX (256u << 20) /* an entry larger than this is not read */

static const char *const MAGIC[DISKCACHE_KINDS] = {"sampcfi2", "sampsym1"};
static const char *const SUFFIX[DISKCACHE_KINDS] = {"cfi", "sym"};

struct head {
  char magic[8];       /* the kind's */
  uint32_t head_bytes; /* sizeof (struct head): a layout changed in the same agent build */
  uint8_t id_len, agent_len, pad[2];
  unsigned char id[ID_MAX], agent[ID_MAX];
  uint64_t k[4];                  /* the rest of the key */
  uint64_t pre_bytes, rest_bytes; /* the two parts that follow */
  uint64_t sum;                   /* of them (struct sum) */
};

static struct {
  pthread_mutex_t mu; /* dir */
  char dir[PATH_MAX];
  struct {
    atomic_uint_fast64_t read, written, refused, failed;
  } n[DISKCACHE_KINDS];
  atomic_uint_fast64_t seq;
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* FNV-1a over the 64-bit words of a stream given in pieces (a last partial word byte by byte). */
struct sum {
  uint64_t h;
  unsigned char carry[8];
  size_t nc;
};

static void sum_add(struct sum *s, const void *data, size_t n) {
  const unsigned char *p = data;
  while (n && s->nc) { /* complete the word a piece before left */
    s->carry[s->nc++] = *p++, n--;
    if (s->nc == 8) {
      uint64_t w;
      memcpy(&w, s->carry, 8);
      s->h = (s->h ^ w) * 1099511628211ull;
      s->nc = 0;
    }
  }
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    s->h = (s->h ^ w) * 1099511628211ull;
  }
  memcpy(s->carry, p, n);
  s->nc = n;
}

static uint64_t sum_end(struct sum *s) {
  for (size_t i = 0; i < s->nc; i++) s->h = (s->h ^ s->carry[i]) * 1099511628211ull;
  return s->h;
}

#define SUM_START \
  { .h = 1469598103934665603ull }

static void fill_key(struct head *h, enum diskcache_kind kind, const struct diskcache_key *k) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, MAGIC[kind], 8);
  h->head_bytes = sizeof *h;
  h->id_len = (uint8_t)k->id_len;
  h->agent_len = (uint8_t)k->agent_len;
  memcpy(h->id, k->id, k->id_len);
  memcpy(h->agent, k->agent, k->agent_len);
  memcpy(h->k, k->k, sizeof h->k);
}

/* The key's file (dir/<build-id in hex>.<kind>) into buf; 0, or -1 when there is no cache or
 * no usable key. */
static int file_of(enum diskcache_kind kind, const struct diskcache_key *k, char *buf, size_t len) {
  if (!k->id_len || k->id_len > ID_MAX || !k->agent_len || k->agent_len > ID_MAX) return -1;
  char hex[2 * ID_MAX + 1];
  for (size_t i = 0; i < k->id_len; i++) snprintf(hex + 2 * i, 3, "%02x", k->id[i]);
  pthread_mutex_lock(&cache.mu);
  int n = cache.dir[0] ? snprintf(buf, len, "%s/%s.%s", cache.dir, hex, SUFFIX[kind]) : -1;
  pthread_mutex_unlock(&cache.mu);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Reads (or, `writing`, writes) exactly n bytes: 0, or -1 (errno set, or 0 at an early end). */
static int whole(int fd, void *buf, size_t n, int writing) {
  unsigned char *p = buf;
  while (n) {
    ssize_t r = writing ? write(fd, p, n) : read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (!r) errno = 0;
      return -1;
    }
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* Reads the open file fd as the entry whose header is `want` (see diskcache_load): 0 or -1. */
static int read_entry(int fd, const struct head *want, void *pre, size_t pre_len,
                      diskcache_room_fn room, void *ctx) {
  struct stat st;
  struct head h;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (uint64_t)st.st_size < sizeof h || (uint64_t)st.st_size > FILE_MAX ||
      whole(fd, &h, sizeof h, 0))
    return -1;
  /* the key: everything before the sizes */
  if (memcmp(&h, want, offsetof(struct head, pre_bytes)) || h.pre_bytes != pre_len ||
      h.rest_bytes > FILE_MAX || (uint64_t)st.st_size != sizeof h + pre_len + h.rest_bytes ||
      whole(fd, pre, pre_len, 0))
    return -1;
  struct iovec out[2] = {{0}};
  int n = room(ctx, pre, (size_t)h.rest_bytes, out);
  if (n < 1 || n > 2 || out[0].iov_len + (n > 1 ? out[1].iov_len : 0) != h.rest_bytes) return -1;
  struct sum s = SUM_START;
  sum_add(&s, pre, pre_len);
  for (int i = 0; i < n; i++) {
    if (whole(fd, out[i].iov_base, out[i].iov_len, 0)) return -1;
    sum_add(&s, out[i].iov_base, out[i].iov_len);
  }
  return sum_end(&s) == h.sum ? 0 : -1;
}

int diskcache_load(enum diskcache_kind kind, const struct diskcache_key *k, void *pre,
                   size_t pre_len, diskcache_room_fn room, void *ctx) {
  char path[PATH_MAX];
  if (file_of(kind, k, path, sizeof path)) return -ENOENT;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT) return -ENOENT;
  struct head want;
  fill_key(&want, kind, k);
  int rc = fd < 0 ? -1 : read_entry(fd, &want, pre, pre_len, room, ctx);
  if (fd >= 0) close(fd);
  if (rc) atomic_fetch_add(&cache.n[kind].refused, 1);
  return rc ? -EINVAL : 0;
}

void diskcache_took(enum diskcache_kind kind, int ok) {
  atomic_fetch_add(ok ? &cache.n[kind].read : &cache.n[kind].refused, 1);
}

int diskcache_store(enum diskcache_kind kind, const struct diskcache_key *k,
                    const struct iovec *parts, int nparts) {
  char path[PATH_MAX], tmp[PATH_MAX + 48];
  if (file_of(kind, k, path, sizeof path) || nparts < 1) return -ENOENT;
  snprintf(tmp, sizeof tmp, "%s.%ld.%llu.tmp", path, (long)getpid(),
           (unsigned long long)atomic_fetch_add(&cache.seq, 1));
  struct head h;
  fill_key(&h, kind, k);
  struct sum s = SUM_START;
  h.pre_bytes = parts[0].iov_len;
  for (int i = 0; i < nparts; i++) {
    if (i) h.rest_bytes += parts[i].iov_len;
    sum_add(&s, parts[i].iov_base, parts[i].iov_len);
  }
  h.sum = sum_end(&s);
  int err = 0;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    err = -errno;
  } else {
    if (whole(fd, &h, sizeof h, 1)) err = errno ? -errno : -EIO;
    for (int i = 0; i < nparts && !err; i++)
      if (whole(fd, parts[i].iov_base, parts[i].iov_len, 1)) err = errno ? -errno : -EIO;
    if (close(fd) && !err) err = -errno;
    if (!err && rename(tmp, path)) err = -errno;
    if (err) unlink(tmp);
  }
  atomic_fetch_add(err ? &cache.n[kind].failed : &cache.n[kind].written, 1);
  return err;
}

/* Makes dir and the directories above it that are missing (mode 0700). 0 or -errno. */
static int make_dirs(char *dir) {
  struct stat st;
  if (!stat(dir, &st)) return 0;
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    int rc = mkdir(dir, 0700);
    *p = '/';
    if (rc && errno != EEXIST) return -errno;
  }
  return mkdir(dir, 0700) && errno != EEXIST ? -errno : 0;
}

int diskcache_open(const char *dir, char *why, size_t whylen) {
  char d[PATH_MAX];
  int err = 0;
  const char *what = NULL;
  struct stat st;
  if (dir && (!dir[0] || strlen(dir) >= sizeof d - 80)) {
    err = -ENAMETOOLONG;
    what = dir[0] ? "the path is too long" : "the path is empty";
  } else if (dir) {
    snprintf(d, sizeof d, "%s", dir);
    if ((err = make_dirs(d))) {
      what = "cannot make it";
    } else if (stat(d, &st)) {
      err = -errno, what = "cannot read it";
    } else if (!S_ISDIR(st.st_mode)) {
      err = -ENOTDIR, what = "not a directory";
    } else if (st.st_uid != geteuid()) {
      err = -EPERM, what = "another user's directory";
    } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
      err = -EPERM, what = "others can write it";
    } else if (access(d, W_OK | X_OK)) {
      err = -errno, what = "cannot write it";
    }
  }
  if (err && why) snprintf(why, whylen, "%s: %s (%s)", dir, what, strerror(-err));
  pthread_mutex_lock(&cache.mu);
  snprintf(cache.dir, sizeof cache.dir, "%s", dir && !err ? d : "");
  pthread_mutex_unlock(&cache.mu);
  return err;
}

void diskcache_dir(char *buf, size_t len) {
  pthread_mutex_lock(&cache.mu);
  snprintf(buf, len, "%s", cache.dir);
  pthread_mutex_unlock(&cache.mu);
}

void diskcache_stats(enum diskcache_kind kind, struct diskcache_stats *out) {
  out->read = atomic_load(&cache.n[kind].read);
  out->written = atomic_load(&cache.n[kind].written);
  out->refused = atomic_load(&cache.n[kind].refused);
  out->failed = atomic_load(&cache.n[kind].failed);
}

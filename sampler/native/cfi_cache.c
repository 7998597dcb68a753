/*
 * cfi_cache.c — compiled unwind tables kept on disk (see cfi_cache.h). A file is a header (what
 * the table was compiled from, its counts, a checksum of the rest) followed by the table's block
 * as cfi.c lays it out in memory: rules, rows, buckets.
 */
#include "cfi_cache.h"

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

#include "cfi.h"
#include "objects.h"

#define MAGIC "sampcfi1"
#define ID_MAX OBJECTS_BUILD_ID_MAX
#define FILE_MAX (256u << 20) /* a table larger than this is not read */

struct head {
  char magic[8];
  uint32_t head_bytes; /* sizeof (struct head): a layout changed in the same agent build */
  uint8_t id_len, agent_len, pad[2];
  unsigned char id[ID_MAX], agent[ID_MAX];
  uint64_t text_off, text_size, hdr_off, entries; /* the key */
  uint64_t n, nbuckets, nrules;                   /* the table */
  uint32_t first;
  int32_t ra_column;
  uint64_t sum; /* of the block that follows */
};

static struct {
  pthread_mutex_t mu; /* dir */
  char dir[PATH_MAX];
  atomic_uint_fast64_t read, written, refused, failed, seq;
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* FNV-1a over 64-bit words (the block is a whole number of 32-bit words; a last half word is
 * taken alone). */
static uint64_t checksum(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void fill_key(struct head *h, const struct cfi_cache_key *k) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, MAGIC, 8);
  h->head_bytes = sizeof *h;
  h->id_len = (uint8_t)k->id_len;
  h->agent_len = (uint8_t)k->agent_len;
  memcpy(h->id, k->id, k->id_len);
  memcpy(h->agent, k->agent, k->agent_len);
  h->text_off = k->text_off;
  h->text_size = k->text_size;
  h->hdr_off = k->hdr_off;
  h->entries = k->entries;
}

/* The key's file (dir/<build-id in hex>.cfi) into buf; 0, or -1 when there is no cache or no
 * usable key. */
static int file_of(const struct cfi_cache_key *k, char *buf, size_t len) {
  if (!k->id_len || k->id_len > ID_MAX || !k->agent_len || k->agent_len > ID_MAX) return -1;
  char hex[2 * ID_MAX + 1];
  for (size_t i = 0; i < k->id_len; i++) snprintf(hex + 2 * i, 3, "%02x", k->id[i]);
  pthread_mutex_lock(&cache.mu);
  int n = cache.dir[0] ? snprintf(buf, len, "%s/%s.cfi", cache.dir, hex) : -1;
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

/* The table of the open file fd for key (its header `want`), or NULL: refused. */
static struct cfi_table *read_table(int fd, const struct head *want) {
  struct stat st;
  struct head h;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (uint64_t)st.st_size < sizeof h || (uint64_t)st.st_size > FILE_MAX ||
      whole(fd, &h, sizeof h, 0))
    return NULL;
  /* the key: everything before the counts */
  if (memcmp(&h, want, offsetof(struct head, n))) return NULL;
  if (h.n > FILE_MAX || h.nbuckets > FILE_MAX || h.nrules > FILE_MAX) return NULL;
  struct cfi_table *t = cfi_alloc((size_t)h.n, (size_t)h.nbuckets, (size_t)h.nrules);
  if (!t) return NULL;
  size_t block = cfi_bytes(t) - sizeof *t;
  t->first = h.first;
  t->ra_column = h.ra_column;
  if ((uint64_t)st.st_size != sizeof h + block || whole(fd, t->rules, block, 0) ||
      checksum((const unsigned char *)t->rules, block) != h.sum || cfi_adopt(t)) {
    free(t);
    return NULL;
  }
  return t;
}

struct cfi_table *cfi_cache_load(const struct cfi_cache_key *k) {
  char path[PATH_MAX];
  if (file_of(k, path, sizeof path)) return NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno != ENOENT) atomic_fetch_add(&cache.refused, 1);
    return NULL;
  }
  struct head want;
  fill_key(&want, k);
  struct cfi_table *t = read_table(fd, &want);
  close(fd);
  atomic_fetch_add(t ? &cache.read : &cache.refused, 1);
  return t;
}

int cfi_cache_store(const struct cfi_cache_key *k, const struct cfi_table *t) {
  char path[PATH_MAX], tmp[PATH_MAX + 48];
  if (file_of(k, path, sizeof path)) return -ENOENT;
  snprintf(tmp, sizeof tmp, "%s.%ld.%llu.tmp", path, (long)getpid(),
           (unsigned long long)atomic_fetch_add(&cache.seq, 1));
  struct head h;
  fill_key(&h, k);
  size_t block = cfi_bytes(t) - sizeof *t;
  h.n = t->n;
  h.nbuckets = t->nbuckets;
  h.nrules = t->nrules;
  h.first = t->first;
  h.ra_column = t->ra_column;
  h.sum = checksum((const unsigned char *)t->rules, block);
  int err = 0;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    err = -errno;
  } else {
    if (whole(fd, &h, sizeof h, 1) || whole(fd, (void *)t->rules, block, 1))
      err = errno ? -errno : -EIO;
    if (close(fd) && !err) err = -errno;
    if (!err && rename(tmp, path)) err = -errno;
    if (err) unlink(tmp);
  }
  atomic_fetch_add(err ? &cache.failed : &cache.written, 1);
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

int cfi_cache_open(const char *dir, char *why, size_t whylen) {
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

void cfi_cache_dir(char *buf, size_t len) {
  pthread_mutex_lock(&cache.mu);
  snprintf(buf, len, "%s", cache.dir);
  pthread_mutex_unlock(&cache.mu);
}

void cfi_cache_stats(struct cfi_cache_stats *out) {
  out->read = atomic_load(&cache.read);
  out->written = atomic_load(&cache.written);
  out->refused = atomic_load(&cache.refused);
  out->failed = atomic_load(&cache.failed);
}

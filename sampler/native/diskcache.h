/*
 * diskcache.h — what the sampler thread works out from a loaded object at every JVM's start,
 * kept on disk between runs, one file per object's GNU build-id and kind: the compiled unwind
 * table (cfi.h; libjvm.so's ~0.8 MB, ~10 ms to compile, and until it exists every native walk
 * goes through libunwind) and the function symbols (symbols.c; libjvm.so's ~44,000, ~3.5 ms to
 * read and sort). bench/RESULTS.md, "Start-up".
 *
 * An entry is used only when everything it was made from is the same: the object (its build-id
 * and what the kind adds to the key: where its text lies, ...) and this agent (its own build-id:
 * a rebuilt agent, whose code may have changed, makes the entry again and overwrites it). What
 * is read is checked against the file's size and a checksum here, and by the kind's reader
 * (cfi_adopt, symbols.c) for every index it will follow, before anything uses it: a damaged or
 * foreign file is refused, never followed. Files are written to a temporary name and renamed: a
 * reader sees a whole file or none. Only files of this user, in a directory of this user that
 * nobody else can write, are read.
 *
 * Called on the sampler thread (objects.c under its writer's lock but outside the loader's;
 * symbols.c under its own). Not signal-safe.
 */
#ifndef SAMPLER_DISKCACHE_H
#define SAMPLER_DISKCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

enum diskcache_kind { DISKCACHE_CFI = 0, DISKCACHE_SYMBOLS = 1, DISKCACHE_KINDS };

/* What an entry is made from. */
struct diskcache_key {
  const unsigned char *id; /* the object's GNU build-id: the file's name */
  size_t id_len;
  const unsigned char *agent; /* the agent's own build-id */
  size_t agent_len;
  uint64_t k[4]; /* the rest, the kind's (zero what it does not use) */
};

/* Uses dir (made when missing, mode 0700; copied) for the entries; NULL: no cache. Returns 0,
 * or a negative errno with why (the cache is then off): the directory cannot be made or
 * written, is not a directory, is not this user's, or others can write it. Thread-safe. */
int diskcache_open(const char *dir, char *why, size_t whylen);

/* The directory in use, copied into buf ("" when none). Thread-safe. */
void diskcache_dir(char *buf, size_t len);

/* Where a load puts the rest of an entry: room(ctx, pre, rest, out) fills out[0] (and out[1],
 * when the rest goes to two places) with memory whose lengths add up to rest, and returns how
 * many it filled; 0: not wanted (refused). */
typedef int (*diskcache_room_fn)(void *ctx, const void *pre, size_t rest, struct iovec out[2]);

/* Reads the entry of `kind` for k: its first pre_len bytes into pre, then the rest into the
 * memory room gives — both covered by the file's checksum, checked before it returns. Returns 0
 * (the caller then checks what it read and says diskcache_took), -ENOENT (no cache, no file),
 * or -EINVAL (refused, counted; what room gave is the caller's to free). Thread-safe. */
int diskcache_load(enum diskcache_kind kind, const struct diskcache_key *k, void *pre,
                   size_t pre_len, diskcache_room_fn room, void *ctx);

/* After a load that returned 0: whether the caller's own checks took what it read (counted as
 * read) or refused it (counted as refused). */
void diskcache_took(enum diskcache_kind kind, int ok);

/* Keeps the entry of `kind` for k, the parts one after the other (the first is what a load
 * reads into `pre`): written whole under a temporary name, then renamed over any older file.
 * Returns 0 or a negative errno (counted). Thread-safe. */
int diskcache_store(enum diskcache_kind kind, const struct diskcache_key *k,
                    const struct iovec *parts, int nparts);

/* Since the process started, per kind. */
struct diskcache_stats {
  uint64_t read;    /* entries read and used */
  uint64_t written; /* entries made and written */
  uint64_t refused; /* files found and not used: made by another agent build or from another
                       object with this build-id, damaged, not this user's */
  uint64_t failed;  /* writes that failed (what was made is used all the same) */
};
void diskcache_stats(enum diskcache_kind kind, struct diskcache_stats *out);

#endif

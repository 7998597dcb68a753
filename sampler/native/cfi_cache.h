/*
 * cfi_cache.h — compiled unwind tables (cfi.h) kept on disk between runs, one file per loaded
 * object's GNU build-id: a JVM's start then reads libjvm.so's ~0.8 MB table (and libc's, ...)
 * instead of compiling ~44,000 FDEs again (~10 ms of CPU on the sampler thread while the JVM
 * starts; bench/RESULTS.md, "Start-up").
 *
 * A file is used only when everything it was made from is the same: the object (its build-id,
 * where its text and .eh_frame_hdr lie, how many FDEs), and this agent (its own build-id: a
 * rebuilt agent, whose compiler may have changed, compiles again and overwrites). What is read
 * is checked whole before the signal path may see it — its size, a checksum, and every index
 * cfi_find follows (cfi_adopt) — so a damaged or foreign file is refused, never followed. Files
 * are written to a temporary name and renamed: a reader sees a whole file or none. Only files
 * of this user, in a directory of this user that nobody else can write, are read.
 *
 * Called by objects.c under its writer's lock, outside the loader's (the reads and writes are
 * file I/O). Not signal-safe.
 */
#ifndef SAMPLER_CFI_CACHE_H
#define SAMPLER_CFI_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct cfi_table;

/* What a table is compiled from: an object and the agent that compiles it. */
struct cfi_cache_key {
  const unsigned char *id; /* the object's GNU build-id */
  size_t id_len;
  const unsigned char *agent; /* the agent's own build-id */
  size_t agent_len;
  uint64_t text_off, text_size; /* its executable range, from its load bias */
  uint64_t hdr_off;             /* its .eh_frame_hdr, from its load bias */
  uint64_t entries;             /* the FDEs .eh_frame_hdr lists */
};

/* Uses dir (made when missing, mode 0700; copied) for the tables; NULL: no cache. Returns 0, or
 * a negative errno with why (the cache is then off): the directory cannot be made or written,
 * is not a directory, is not this user's, or others can write it. Thread-safe. */
int cfi_cache_open(const char *dir, char *why, size_t whylen);

/* The directory in use, copied into buf ("" when none). Thread-safe. */
void cfi_cache_dir(char *buf, size_t len);

/* The table kept for k (malloc'd, checked: cfi_adopt), or NULL: no cache, no file, or a file
 * refused (counted). Thread-safe. */
struct cfi_table *cfi_cache_load(const struct cfi_cache_key *k);

/* Keeps t for k (written whole under a temporary name, then renamed over any older file).
 * Returns 0 or a negative errno (counted). Thread-safe. */
int cfi_cache_store(const struct cfi_cache_key *k, const struct cfi_table *t);

/* Since the process started. */
struct cfi_cache_stats {
  uint64_t read;    /* tables read from the cache */
  uint64_t written; /* tables written to it */
  uint64_t refused; /* files found and not used: made by another agent build or from another
                       object with this build-id, damaged, not this user's */
  uint64_t failed;  /* writes that failed (the table is used all the same) */
};
void cfi_cache_stats(struct cfi_cache_stats *out);

#endif

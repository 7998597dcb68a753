/*
 * commit.h — a file written whole or not at all, for the profile and the stats file. It is
 * written into a file that has no name until it is complete (O_TMPFILE, in the target's
 * directory), then linked in: a writer killed midway (Runtime.halt, SIGKILL, a crash) leaves
 * nothing behind. Where the file system makes no unnamed files, or /proc/self/fd cannot name
 * one to link it, a named temporary beside the target is renamed over it at the end.
 */
#ifndef SAMPLER_COMMIT_H
#define SAMPLER_COMMIT_H

#include <stddef.h>
#include <stdio.h>

#include "options.h"

/* A file being written for a target path: write to f, then commit_close. */
struct commit_file {
  FILE *f;
  int unnamed;
  char tmp[OPT_FILE_MAX + 32]; /* the named temporary (unnamed == 0) */
};

/* Opens the file written for `path` (nothing is at path until commit_close). Returns 0 or a
 * negative errno. Thread-safe once commit_check_writable has run; not signal-safe. */
int commit_open(const char *path, struct commit_file *o);

/* Finishes o: flushed, synced, and named path (replacing what was there in one step) — or,
 * when rc (the writing's result) or any of that failed, gone, the old file left as it was.
 * Returns rc or the first failure, negative. Thread-safe; not signal-safe. */
int commit_close(struct commit_file *o, const char *path, int rc);

/* The probe at start: creates and removes a temporary file beside path (and learns whether
 * unnamed files can be linked here). Returns 0, or a negative errno-style code with the reason
 * in err, naming the option opt ("file", "stats"). Call before any writer runs. */
int commit_check_writable(const char *path, const char *opt, char *err, size_t errlen);

#endif

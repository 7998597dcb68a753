/*
 * chunks.c — writing the profile (a snapshot of the sampler's tables through output.c, and the
 * stats file) and the loop= cutter: a thread of the agent ("sampler-loop") that cuts the
 * profile into chunks on a fixed schedule and writes each to its own file.
 *
 * Hazards: one writer at a time — every write holds cut_lock, which also guards the chunk's
 * number and start; the cutter is started and stopped with ctl held, and stopped before a
 * run's last write.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent_internal.h"
#include "counters.h"
#include "options.h"
#include "output.h"
#include "platform.h"
#include "sampler.h"

/* ---- writing the profile ---- */

/* Writes what was recorded to path (a snapshot; with `cut`, the next chunk starts from zero at
 * the same moment), and its stats to stats= when set. On success the short line at exit is said
 * when `summary`. Says why not when it cannot. Returns 0 or a negative errno-style code. */
int chunks_write(const char *path, int cut, int summary, const char *why) {
  char err[OPT_FILE_MAX + 256];
  struct sampler_snapshot snap;
  int rc = sampler_snapshot(&snap, cut);
  if (rc == 0)
    rc = output_write(&agent.opt, path, &snap, err, sizeof err);
  else
    snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(-rc));
  if (rc != 0) {
    say("%s (%s)", err, why);
  } else {
    if (err[0]) say("%s", err); /* a note on the file written */
    snprintf(agent.last_file, sizeof agent.last_file, "%s", path);
    const char *stats = agent.opt.stats; /* named at exit only when written */
    if (*stats && output_write_stats(&agent.opt, path, &snap.report, err, sizeof err)) {
      say("%s (%s)", err, why);
      stats = NULL;
    }
    if (summary) {
      char line[2 * OPT_FILE_MAX + 512];
      counters_exit_line(line, sizeof line, &agent.opt, path, stats, &snap.report);
      say("%s", line);
    }
  }
  if (rc == 0 || snap.stacks) sampler_snapshot_free(&snap);
  return rc;
}

/* The file the chunk now being recorded goes to (the profile's own file without `loop`). */
void chunks_current_file(char *out, size_t len) {
  if (!agent.opt.loop_ns ||
      opt_chunk_file(&agent.opt, agent.chunk_seq, agent.chunk_start, out, len))
    snprintf(out, len, "%s", agent.opt.file);
}

/* loop=: every period, the chunk so far is cut off and written, the next one named after it.
 * The cuts keep to one schedule from the start (monotonic clock): the time a chunk takes to be
 * written is not added to the next period (the chunks would drift by their writes); a write
 * that outlasts a period skips the cuts it missed. */
static void *cutter_main(void *arg) {
  (void)arg;
  uint64_t period = agent.opt.loop_ns, next = plat_mono_ns() + period;
  pthread_mutex_lock(&agent.cut_lock);
  while (!agent.cutter_stop) {
    struct timespec until = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
    int rc = 0;
    while (!agent.cutter_stop && rc != ETIMEDOUT)
      rc = pthread_cond_clockwait(&agent.cut_cond, &agent.cut_lock, CLOCK_MONOTONIC, &until);
    if (agent.cutter_stop) break;
    char path[OPT_FILE_MAX];
    chunks_current_file(path, sizeof path);
    if (chunks_write(path, 1, 0, "loop") == 0)
      say("chunk %" PRIu64 " written to %s", agent.chunk_seq, path);
    /* the chunk's names, tree and buffers were freed: without this, glibc keeps much of that
     * memory, and continuous profiling grew by ~20 MB an hour (bench/results/soak.md) */
    plat_release_free_memory(); /* ~0.5 ms */
    agent.chunk_seq++; /* a chunk that could not be written is not overwritten by the next */
    agent.chunk_start = time(NULL);
    uint64_t now = plat_mono_ns();
    next += period;
    if (next <= now) next += ((now - next) / period + 1) * period;
  }
  pthread_mutex_unlock(&agent.cut_lock);
  return NULL;
}

void chunks_cutter_start(void) {
  agent.chunk_seq = 0;
  agent.chunk_start = agent.started;
  agent.cutter_stop = 0;
  if (!agent.opt.loop_ns) return;
  agent.cutter_on = pthread_create(&agent.cutter, NULL, cutter_main, NULL) == 0;
  if (agent.cutter_on) pthread_setname_np(agent.cutter, "sampler-loop");
  if (!agent.cutter_on)
    say("%s",
        "loop: cannot start the thread that writes the chunks: one profile at the end instead");
}

void chunks_cutter_stop(void) {
  if (!agent.cutter_on) return;
  pthread_mutex_lock(&agent.cut_lock);
  agent.cutter_stop = 1;
  pthread_cond_signal(&agent.cut_cond);
  pthread_mutex_unlock(&agent.cut_lock);
  pthread_join(agent.cutter, NULL);
  agent.cutter_on = 0;
}

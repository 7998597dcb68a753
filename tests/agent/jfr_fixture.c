/*
 * jfr_fixture — writes a JFR recording with known threads, stacks and events for
 * test_jfr_read.py, which reads it back with the JDK's `jfr` tool and checks every value
 * against its own copy of what is written here (keep the two in step).
 *
 *   jfr_fixture OUT.jfr [MANY]
 *
 * With MANY, MANY more jdk.ExecutionSamples follow on "main" at 10000 + i µs, each with a stack
 * of its own (com/example/Many.mNNNNNNN_..., a 64-byte name): enough to fill several
 * checkpoint events, which the reader must follow back one from the other.
 *
 * Clock: start 2026-11-27T12:00:00Z (1795780800 s since the epoch), ticks of 1 µs from 5000000.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr.h"

#define START_NS 1795780800000000000LL
#define START_TICKS 5000000LL

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: jfr_fixture OUT.jfr [MANY]\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "wb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  struct jfr_clock clock = {START_NS, START_TICKS, 1000000};
  struct jfr_writer *w;
  int rc = jfr_open(&w, f, &clock);
  if (rc) {
    fprintf(stderr, "jfr_open: %s\n", strerror(-rc));
    return 1;
  }
  uint32_t main_t, odd_t, gc_t, reborn_t;
  rc = jfr_thread(w, 4242, 1, "main", &main_t);
  /* a quote and a newline in a thread name */
  if (!rc) rc = jfr_thread(w, 4243, 17, "worker \"odd\"\nname", &odd_t);
  if (!rc) rc = jfr_thread(w, 4250, 0, "GC Thread#0", &gc_t); /* not a Java thread */
  /* a later thread with main's OS tid (the kernel reuses them): another thread all the same */
  if (!rc) rc = jfr_thread(w, 4242, 99, "reborn", &reborn_t);

  /* the method name holds U+1F600, given in JVMTI's modified UTF-8 (two 3-byte surrogates) */
  static const struct jfr_frame java_stack[] = {
      {"com/example/Hot", "inner", "(I)I", JFR_FRAME_INLINED, 12, 3},
      {"com/example/Hot", "run\xed\xa0\xbd\xed\xb8\x80", "()V", JFR_FRAME_JIT, 40, 17},
      {"com/example/Main", "main", "([Ljava/lang/String;)V", JFR_FRAME_INTERPRETED, 7, 0},
  };
  static const struct jfr_frame native_stack[] = {
      {"", "memcpy", "", JFR_FRAME_NATIVE, -1, -1},
      {"java/lang/Object", "hashCode", "()I", JFR_FRAME_NATIVE, -1, -1},
      {"com/example/Main", "main", "([Ljava/lang/String;)V", JFR_FRAME_INTERPRETED, 9, 4},
  };
  static const struct jfr_frame gc_stack[] = {
      {"", "G1ParTask::work", "", JFR_FRAME_NATIVE, -1, -1},
  };
  uint32_t s_java, s_native, s_gc, again;
  if (!rc) rc = jfr_stack(w, java_stack, 3, 0, &s_java);
  if (!rc) rc = jfr_stack(w, native_stack, 3, 0, &s_native);
  if (!rc) rc = jfr_stack(w, gc_stack, 1, 1, &s_gc);
  if (!rc) rc = jfr_stack(w, java_stack, 3, 0, &again);
  if (!rc && again != s_java) {
    fprintf(stderr, "the same stack got ids %u and %u\n", s_java, again);
    return 1;
  }

  if (!rc) rc = jfr_key_value(w, JFR_SETTING, START_TICKS, "interval", "1ms");
  /* times in µs after the start: 1001, 2002, 3003 ... (not whole ms: the tick conversion shows) */
  const struct {
    enum jfr_sample_kind kind;
    int64_t us;
    const uint32_t *thread, *stack;
    enum jfr_thread_state state;
    uint64_t cpu_ns;
  } samples[] = {
      {JFR_EXECUTION_SAMPLE, 1001, &main_t, &s_java, JFR_STATE_RUNNABLE, 0},
      {JFR_EXECUTION_SAMPLE, 2002, &odd_t, &s_java, JFR_STATE_RUNNABLE, 0},
      {JFR_NATIVE_METHOD_SAMPLE, 3003, &main_t, &s_native, JFR_STATE_RUNNABLE, 0},
      {JFR_CPU_SAMPLE, 4004, &gc_t, &s_gc, JFR_STATE_RUNNABLE, 2500000},
      {JFR_EXECUTION_SAMPLE, 5005, &main_t, &s_java, JFR_STATE_SLEEPING, 0},
      {JFR_EXECUTION_SAMPLE, 5505, &reborn_t, &s_java, JFR_STATE_RUNNABLE, 0},
  };
  for (size_t i = 0; i < sizeof samples / sizeof *samples && !rc; i++)
    rc = jfr_sample(w, samples[i].kind, START_TICKS + samples[i].us, *samples[i].thread,
                    *samples[i].stack, samples[i].state, samples[i].cpu_ns);
  if (!rc) rc = jfr_key_value(w, JFR_SUMMARY, START_TICKS + 6006, "samples", "6");
  /* event=alloc's: two allocations in the Java stack, of a byte array and of a class */
  uint32_t c_bytes, c_string;
  if (!rc) rc = jfr_class(w, "[B", &c_bytes);
  if (!rc) rc = jfr_class(w, "java/lang/String", &c_string);
  if (!rc) rc = jfr_allocation(w, START_TICKS + 6106, main_t, s_java, c_bytes, 524288);
  if (!rc) rc = jfr_allocation(w, START_TICKS + 6206, odd_t, s_java, c_string, 1000);
  /* event=lock's: a monitor entered after 1.5 ms, a park without a blocker (no class) */
  uint32_t c_object;
  if (!rc) rc = jfr_class(w, "java/lang/Object", &c_object);
  if (!rc) rc = jfr_lock_wait(w, 0, START_TICKS + 6306, 1500000, main_t, s_java, c_object);
  if (!rc) rc = jfr_lock_wait(w, 1, START_TICKS + 6406, 250000, odd_t, s_java, 0);
  long many = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
  for (long i = 0; i < many && !rc; i++) {
    char name[96]; /* 64 bytes while i < 10^7 */
    snprintf(name, sizeof name, "m%07ld_%056d", i, 0);
    struct jfr_frame fr[] = {{"com/example/Many", name, "()V", JFR_FRAME_JIT, 1, 0}};
    uint32_t s;
    rc = jfr_stack(w, fr, 1, 0, &s);
    if (!rc)
      rc = jfr_sample(w, JFR_EXECUTION_SAMPLE, START_TICKS + 10000 + i, main_t, s,
                      JFR_STATE_RUNNABLE, 0);
  }
  if (rc) {
    fprintf(stderr, "writing: %s\n", strerror(-rc));
    jfr_abort(w);
    return 1;
  }
  rc = jfr_close(w, START_TICKS + 2500000);
  if (rc) {
    fprintf(stderr, "jfr_close: %s\n", strerror(-rc));
    return 1;
  }
  if (fclose(f) != 0) {
    perror(argv[1]);
    return 1;
  }
  return 0;
}

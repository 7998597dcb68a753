/*
 * jfr.h — a writer of JFR recordings: the binary format of JDK Flight Recorder (version 2.0,
 * JDK 17 and later), as the JDK's own `jfr` tool (summary, print, print --json) of JDK 17, 21 and
 * 25 reads it and JDK Mission Control opens it as a CPU profile.
 *
 * What it writes, in one chunk: the 68-byte chunk header; the events as they are given
 * (jdk.ExecutionSample, jdk.NativeMethodSample, sampler.CPUSample with a CPU weight,
 * jdk.ObjectAllocationSample with its class and weight in bytes, sampler.Setting and
 * sampler.Summary with a key and a value, sampler.Mark with a time, a duration and a name); at
 * jfr_close the checkpoint
 * events with the constant pools (java.lang.Thread, jdk.types.StackTrace of jdk.types.StackFrame,
 * jdk.types.Method, java.lang.Class, jdk.types.Package, jdk.types.Symbol, jdk.types.FrameType,
 * jdk.types.ThreadState), then the metadata event that describes every type with its standard
 * name and fields, then the header's final sizes and offsets. Integers are LEB128-compressed
 * (7 bits a byte, the ninth byte whole), the header big-endian. Strings are written in JFR's
 * encoding 3 (UTF-8 byte array): a name given in JVMTI's modified UTF-8 (a supplementary
 * character as two 3-byte surrogates, NUL as C0 80) is turned into standard UTF-8 first, so a
 * non-BMP character reads back as itself; a byte that is not UTF-8 becomes '?'.
 *
 * Times are ticks of the caller's clock (struct jfr_clock: the wall-clock start in ns since the
 * epoch, the tick counter's value at that moment, and ticks per second).
 *
 * Limits: one chunk per file; threads, stacks and names are held until jfr_close (each distinct
 * one once, hashed: memory grows with the distinct items written, not with the events, which go
 * straight to the FILE; checkpoints are cut at 1 MiB); at most 2^31 - 1 distinct items of a kind
 * and 2^28 bytes an event; no class loaders, modules or thread groups (written as null); the
 * writer does not fclose, flush to disk or rename — the caller commits the FILE (temp + rename)
 * when jfr_close returned 0, and discards it otherwise. Not thread-safe: one thread writes.
 * Never called from the signal handler (it allocates).
 */
#ifndef SAMPLER_JFR_H
#define SAMPLER_JFR_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct jfr_writer;

/* The clock that event times are counted in. */
struct jfr_clock {
  int64_t start_ns;         /* wall-clock time of the recording's start, ns since the epoch */
  int64_t start_ticks;      /* the tick counter at that moment */
  int64_t ticks_per_second; /* > 0; 1000000000 for a nanosecond clock */
};

/* Frame types, the four JFR knows (jdk.types.FrameType); the values are the pool keys the JDK
 * writes, which some readers go by instead of the names. */
enum jfr_frame_type {
  JFR_FRAME_INTERPRETED = 0, /* "Interpreted" */
  JFR_FRAME_JIT,             /* "JIT compiled" */
  JFR_FRAME_INLINED,         /* "Inlined" */
  JFR_FRAME_NATIVE,          /* "Native": a native method or a C/C++ function */
  JFR_FRAME_TYPES
};

/* One frame of a stack. The names are UTF-8 or JVMTI's modified UTF-8, NUL-terminated. */
struct jfr_frame {
  const char *class_name; /* internal form, "java/lang/String"; "" for a C function */
  const char *method;     /* "hashCode", or a native symbol */
  const char *signature;  /* "()I", or "" when unknown (written as "()") */
  enum jfr_frame_type type;
  int32_t line; /* source line, or -1 when unknown */
  int32_t bci;  /* bytecode index, or -1 */
};

/* Thread states (jdk.types.ThreadState), with the JDK's names. */
enum jfr_thread_state {
  JFR_STATE_RUNNABLE, /* "STATE_RUNNABLE": on a CPU or ready to run */
  JFR_STATE_SLEEPING, /* "STATE_SLEEPING": captured while not running */
  JFR_STATE_COUNT
};

/* The sample events. */
enum jfr_sample_kind {
  JFR_EXECUTION_SAMPLE,     /* jdk.ExecutionSample: a thread running Java code */
  JFR_NATIVE_METHOD_SAMPLE, /* jdk.NativeMethodSample: a thread in native code */
  JFR_CPU_SAMPLE,           /* sampler.CPUSample: a stack weighted by the CPU time it stands for */
  JFR_SAMPLE_KINDS
};

/* Our key/value events. */
enum jfr_kv_kind {
  JFR_SETTING, /* sampler.Setting: one of the agent's settings */
  JFR_SUMMARY, /* sampler.Summary: one of the agent's counters at the end */
  JFR_KV_KINDS
};

/* Starts a recording on f, a seekable file open for writing (not appending): the chunk begins
 * at f's position, and jfr_close seeks back there to patch the header. Returns 0 with *out set,
 * -EINVAL (clock->ticks_per_second <= 0), -ESPIPE (f cannot seek), -ENOMEM or -EIO. */
int jfr_open(struct jfr_writer **out, FILE *f, const struct jfr_clock *clock);

/* Adds a thread (os_tid, Java thread id or 0 when it is not a Java thread, name) and gives its
 * id in *id; the same three values give the same id, and a tid the kernel reused for another
 * thread another id. In the file a thread is keyed by its OS tid (as async-profiler keys it),
 * a reused tid's later threads by 2^32 + id. 0, -ENOMEM or -E2BIG (too many). */
int jfr_thread(struct jfr_writer *w, int64_t os_tid, int64_t java_id, const char *name,
               uint32_t *id);

/* Adds a stack of n frames, the innermost (the running method) first, cut short when truncated
 * is non-zero, and gives its id in *id; the same frames give the same id. 0, -EINVAL (a frame
 * type out of range, a NULL name), -ENOMEM or -E2BIG. */
int jfr_stack(struct jfr_writer *w, const struct jfr_frame *frames, size_t n, int truncated,
              uint32_t *id);

/* Writes a sample event at time ticks for thread and stack (ids from jfr_thread / jfr_stack) in
 * state; cpu_ns is the CPU time it stands for, written only by JFR_CPU_SAMPLE. 0, -EINVAL (an
 * unknown id or kind), -ENOMEM or -EIO. */
int jfr_sample(struct jfr_writer *w, enum jfr_sample_kind kind, int64_t ticks, uint32_t thread,
               uint32_t stack, enum jfr_thread_state state, uint64_t cpu_ns);

/* The id of the class `name` (internal form: "java/lang/String", "[B"; UTF-8 or modified
 * UTF-8) in *id, for jfr_allocation; the same name gives the same id. 0, -EINVAL, -ENOMEM or
 * -E2BIG. */
int jfr_class(struct jfr_writer *w, const char *name, uint32_t *id);

/* Writes a jdk.ObjectAllocationSample event at ticks: thread, stack (ids as for jfr_sample), the
 * allocated class (jfr_class) and its weight, the bytes the sample stands for. 0, -EINVAL (an
 * unknown id), -ENOMEM or -EIO. */
int jfr_allocation(struct jfr_writer *w, int64_t ticks, uint32_t thread, uint32_t stack,
                   uint32_t cls, uint64_t bytes);

/* Writes a lock wait at ticks, dur_ns long: a jdk.ThreadPark (park) with its parkedClass, or a
 * jdk.JavaMonitorEnter with its monitorClass — cls from jfr_class, 0 for none (a park without a
 * blocker: a null reference) — for thread and stack (ids as for jfr_sample). The JDK's other
 * fields follow in its order, with the values it writes for "none" (not recorded here): a
 * monitor's previousOwner null and address 0; a park's timeout and until Long.MIN_VALUE, address
 * 0. 0, -EINVAL (an unknown id), -ENOMEM or -EIO. */
int jfr_lock_wait(struct jfr_writer *w, int park, int64_t ticks, uint64_t dur_ns, uint32_t thread,
                  uint32_t stack, uint32_t cls);

/* Writes a sampler.Mark event: a moment of the run the agent knew of (a GC pause, a profile
 * written), from ticks for dur_ns, called name. 0, -EINVAL, -ENOMEM or -EIO. */
int jfr_mark(struct jfr_writer *w, int64_t ticks, uint64_t dur_ns, const char *name);

/* Writes a sampler.Setting or sampler.Summary event at ticks: key and value, UTF-8. 0, -EINVAL,
 * -ENOMEM or -EIO. */
int jfr_key_value(struct jfr_writer *w, enum jfr_kv_kind kind, int64_t ticks, const char *key,
                  const char *value);

/* Finishes the recording: the constant pools, the metadata, the header with the chunk's size and
 * its duration up to end_ticks; then frees w (always, whatever it returns). Does not fclose f.
 * 0, or -ENOMEM / -EIO (also for any earlier failed write): the file is then not a recording. */
int jfr_close(struct jfr_writer *w, int64_t end_ticks);

/* Frees w without finishing the file (the caller discards it). NULL is allowed. */
void jfr_abort(struct jfr_writer *w);

/* The encoding pieces, exposed for the unit tests. */

/* Writes v LEB128-compressed as JFR reads it (7 bits a byte, low first, the ninth byte whole)
 * into out; returns the number of bytes, 1..9. */
size_t jfr_varint(uint64_t v, uint8_t out[9]);

/* Converts the NUL-terminated name s (UTF-8 or modified UTF-8) into standard UTF-8 in out, which
 * holds at least strlen(s) bytes (the result is never longer); returns its length. Surrogate
 * pairs become one 4-byte character, C0 80 a NUL byte, a byte that begins no valid character
 * and a lone surrogate '?'. */
size_t jfr_utf8(const char *s, char *out);

#endif

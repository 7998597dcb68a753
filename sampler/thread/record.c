/*
 * record.c — turns a thread's answer into a stack in the trace table: the thread's root frame
 * (with `threads`), the Java frames AsyncGetCallTrace gave (named and annotated with their
 * kind), the frames of a recovered walk, or a named frame for why the walk failed. Nothing is
 * dropped silently: units that no stack can carry are kept under [sample lost]. Sampler thread
 * only, traces_lock held.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"
#include "native.h"
#include "platform.h"
#include "round.h"
#include "sample_walk.h"
#include "symbols.h"
#include "timeline.h"
#include "traces.h"

_Static_assert(NATIVE_STOPS ==
                   sizeof((struct sampler_counters *)0)->native_stops / sizeof(uint64_t),
               "sampler_counters.native_stops has a counter per enum native_stop");

int record_init(void) {
  rounds.id_lost = intern_string("[sample lost]", 13);
  rounds.id_blocked = intern_string("[cpu before wait]", 17);
  rounds.id_unknown_method = intern_string("[unknown method]", 16);
  rounds.id_truncated = intern_string("[callers not walked]", 20);
  rounds.id_jvm = intern_string("[JVM runtime]", 13);
  rounds.id_self = intern_string("[sampler thread (this profiler)]", 32);
  rounds.id_name_full = intern_string("[name not kept: table full]", 27);
  rounds.id_stack_full = intern_string("[stack not kept: table full]", 28);
  static const char *const states[] = {"[running]", "[running]", "[sleeping]",
                                       "[parked]",  "[waiting]", "[blocked on monitor]"};
  for (int i = 0; i <= SAMPLER_STATE_BLOCKED; i++) {
    rounds.id_state[i] = intern_string(states[i], strlen(states[i]));
    if (rounds.id_state[i] == TRACES_NO_ID) return -ENOMEM;
  }
  rounds.id_syscall = intern_string("[in system call]", 16);
  if (rounds.id_syscall == TRACES_NO_ID) return -ENOMEM;
  rounds.id_unsampled = intern_string("[thread ended before it was sampled]", 36);
  if (rounds.id_unsampled == TRACES_NO_ID) return -ENOMEM;
  rounds.id_sig_blocked = intern_string("[not sampled: signal blocked]", 29);
  if (rounds.id_sig_blocked == TRACES_NO_ID) return -ENOMEM;
  return rounds.id_lost == TRACES_NO_ID || rounds.id_blocked == TRACES_NO_ID ||
                 rounds.id_unknown_method == TRACES_NO_ID || rounds.id_truncated == TRACES_NO_ID ||
                 rounds.id_jvm == TRACES_NO_ID || rounds.id_self == TRACES_NO_ID ||
                 rounds.id_name_full == TRACES_NO_ID || rounds.id_stack_full == TRACES_NO_ID
             ? -ENOMEM
             : 0;
}

/* The frame id of method m at bytecode index bci (the line matters only with `lines`) running
 * as `kind` (enum codemap_frame_kind; annotated only with `ann`). */
static uint32_t method_frame(jmethodID m, jint bci, int kind) {
  static const char *const suffix[] = {"", "_[j]", "_[i]", "_[0]"};
  if (!m) return rounds.id_unknown_method;
  if (!rounds.cfg.ann) kind = CODEMAP_FRAME_NATIVE;
  if (!rounds.cfg.lines || bci < 0) bci = -1; /* a native method's -3: no line */
  /* the key: the jmethodID, whatever its bits (JDK 26 makes them small counters), with the
   * kind and the bytecode index beside it */
  struct traces_key key = {(uint64_t)(uintptr_t)m, (uint64_t)kind << 32 | (uint32_t)(bci + 1)};
  uint32_t id = traces_key_get(key);
  if (id != TRACES_NO_ID) return id;
  if (rounds.name_fn(rounds.name_ctx, m, bci, rounds.namebuf, NAMEBUF_LEN - 8) != 0)
    return rounds.id_unknown_method;
  strcat(rounds.namebuf, suffix[kind]);
  id = intern_string(rounds.namebuf, strlen(rounds.namebuf));
  if (id == TRACES_NO_ID) return rounds.id_unknown_method;
  traces_key_put(key, id);
  return id;
}

/* A cached key stays while its method does (native code's keys stay: the code map and the
 * objects' list follow what is unloaded there). */
static int key_alive(void *ctx, struct traces_key key) {
  (void)ctx;
  if (key.how >> 63) return 1;
  return rounds.alive_fn(rounds.name_ctx, (jmethodID)(uintptr_t)key.what);
}

void record_sweep_keys(void) {
  if (rounds.alive_fn) rounds.st.keys_unloaded += traces_key_sweep(key_alive, NULL);
}

/* The frame id of the native code at pc: its symbol (symbols.h), cached per pc. A return
 * address is named by the call before it (pc - 1): a call that ends a function (a noreturn
 * call) returns past its end. */
static uint32_t native_frame(uintptr_t pc, int is_return) {
  uintptr_t at = is_return ? pc - 1 : pc;
  struct traces_key key = {(uint64_t)at, 1ull << 63}; /* the tag: no method key has it */
  uint32_t id = traces_key_get(key);
  if (id != TRACES_NO_ID) return id;
  symbols_name(at, rounds.namebuf, NAMEBUF_LEN);
  id = intern_string(rounds.namebuf, strlen(rounds.namebuf));
  if (id != TRACES_NO_ID) traces_key_put(key, id);
  return id;
}

static void learn_at(uintptr_t pc);
static void stub_unknown(uintptr_t pc);

/* Appends the native frames of r (outermost first) after n frames; a walk that ended before
 * reaching Java code or the thread's start says why first. Returns the frame count. */
static int native_frames(const struct sample_record *r, int n, int max) {
  struct native_end end = {r->native_stop, r->native_general, r->native_end_pc};
  if (end.stop == NATIVE_STOP_UNKNOWN && r->nnative == 0 && r->num_frames > 0)
    end.stop = NATIVE_STOP_JAVA; /* interrupted in Java code: AsyncGetCallTrace walked it */
  else
    native_end_resolve(&end); /* the JVM's code, or unknown */
  if (end.stop == NATIVE_STOP_UNKNOWN && rounds.from_cache) {
    learn_at(end.pc); /* code compiled during the run: a native method's wrapper, say */
    native_end_resolve(&end);
    if (end.stop == NATIVE_STOP_UNKNOWN) stub_unknown(end.pc); /* or a stub made since */
  }
  if (end.stop != NATIVE_STOP_OFF) rounds.st.native_stops[end.stop]++;
  rounds.st.native_general += end.general > 0;
  if (r->nnative <= 0) return n;
  hist_add(&rounds.native_cost, r->native_ns);
  if (end.stop != NATIVE_STOP_JAVA && end.stop != NATIVE_STOP_END) {
    const char *why = native_stop_name(end.stop);
    rounds.fbuf[n++] = intern_string(why, strlen(why));
    if (end.stop == NATIVE_STOP_UNKNOWN) rounds.refresh_objects = 1; /* a new object? */
  }
  for (int i = r->nnative - 1; i >= 0 && n < max; i--)
    rounds.fbuf[n++] = native_frame(r->native_pcs[i], i > 0);
  rounds.st.native_frames += (uint64_t)r->nnative;
  return n;
}

/* The interned root frame of thread s: "[name tid=N]". */
static uint32_t thread_root(const struct thread_slot *s) {
  char buf[REG_NAME_MAX + 32];
  int n = snprintf(buf, sizeof buf, "[%s tid=%d]", s->name, (int)s->tid);
  return intern_string(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Puts the thread root frame (when enabled) into fbuf; returns the frame count. b: the
 * thread's book, which keeps the root, or NULL (a thread the sampler never looked at). */
static int begin_stack(const struct thread_slot *s, struct thread_book *b) {
  if (!rounds.cfg.thread_roots) return 0;
  if (!b) {
    rounds.fbuf[0] = thread_root(s);
    return 1;
  }
  if (b->root_id == TRACES_NO_ID || b->root_seq != s->name_seq) { /* new, or renamed */
    b->root_id = thread_root(s);
    b->root_seq = s->name_seq;
  }
  rounds.fbuf[0] = b->root_id;
  return 1;
}

/* Stores the stack in rounds.fbuf[0..n), a capture of event kind `kind` (enum sampler_event) of
 * thread s (NULL: the sampler thread), and when it was taken (`when`, CLOCK_MONOTONIC: the
 * handler's clock as it began, or this round's for weights that no capture of their own
 * carries) on the time axis. A frame whose name the full name table refused stands as [name
 * not kept: table full]; a stack the stack table cannot take (its limits, or no memory) is
 * kept, weights and all, under [stack not kept: table full] of its kind (its time entries
 * under STHREAD_NOT_KEPT(kind)): nothing is dropped. */
_Static_assert(TRACES_MAX_STACKS - 1 <= TIMELINE_MAX_STACK, "the time axis keeps every stack id");
_Static_assert(TRACES_MAX_STACKS <= STHREAD_NOT_KEPT(SAMPLER_EVENTS - 1),
               "the not-kept ids are past every stack id");
static void put(const struct thread_slot *s, int n, int kind, uint64_t units, uint64_t cpu_ns,
                uint64_t when) {
  for (int i = 0; i < n; i++)
    if (rounds.fbuf[i] == TRACES_NO_ID) rounds.fbuf[i] = rounds.id_name_full;
  uint32_t stack = TIMELINE_NO_STACK;
  if (traces_add_kind(rounds.fbuf, n, kind, units, cpu_ns, &stack) != 0) {
    rounds.st.store_failed++;
    rounds.not_kept[kind].samples++;
    rounds.not_kept[kind].units += units;
    rounds.not_kept[kind].cpu_ns += cpu_ns;
    stack = STHREAD_NOT_KEPT(kind);
  }
  int64_t th = s ? timeline_thread(s->tid, s->java_id, s->name, sizeof s->name)
                 : timeline_thread((int32_t)rounds.self, 0, "sampler", 7);
  if (th < 0 || timeline_add(when, stack, (uint32_t)th, units, cpu_ns) != 0) rounds.st.time_lost++;
}

/* The kind of the samples the rounds take: cpu, or wall. */
static int clock_kind(void) { return rounds.cfg.wall ? SAMPLER_EVENT_WALL : SAMPLER_EVENT_CPU; }

/* put(), counted as CPU samples (the counters `samples` and `cpu_ms`). */
static void store(const struct thread_slot *s, int n, uint64_t units, uint64_t cpu_ns,
                  uint64_t when) {
  put(s, n, clock_kind(), units, cpu_ns, when);
  rounds.st.units += units;
  rounds.st.cpu_ns += cpu_ns;
}

/* Stores thread s's last captured stack again, with these weights. */
static void store_last(const struct thread_slot *s, const struct thread_book *b, uint64_t units,
                       uint64_t cpu_ns) {
  memcpy(rounds.fbuf, b->last, (size_t)b->nlast * sizeof *rounds.fbuf);
  store(s, b->nlast, units, cpu_ns, rounds.round_ns);
}

/* Stores the thread's root (when enabled) and one marker frame (id) under it: CPU that has no
 * stack of its own — lost, or of a thread that ended before it was sampled. */
static void store_marker(const struct thread_slot *s, struct thread_book *b, uint32_t id,
                         uint64_t units, uint64_t cpu_ns) {
  int n = begin_stack(s, b);
  rounds.fbuf[n++] = id;
  store(s, n, units, cpu_ns, rounds.round_ns);
}

uint32_t record_method_frame(jmethodID m, jint bci) {
  return method_frame(m, bci, CODEMAP_FRAME_NATIVE);
}

int record_begin_stack(const struct thread_slot *s) { return begin_stack(s, NULL); }

void record_store(const struct thread_slot *s, int n, int kind, uint64_t units, uint64_t cpu_ns,
                  uint64_t when) {
  put(s, n, kind, units, cpu_ns, when);
}

void record_self(uint64_t sampler_cpu_ns) {
  /* an allocation or lock profile weighs bytes or ns blocked: the sampler thread's CPU has no
   * place in it (beside a cpu or wall profile it goes into that one) */
  if (sampler_cpu_ns <= rounds.self_cpu_recorded || rounds.cfg.hasrun == SAMPLER_HASRUN_REGS ||
      !sthread_clock(&rounds.cfg))
    return;
  uint64_t units = sampler_cpu_ns / rounds.cfg.interval_ns - rounds.self_units_given;
  if (!units) return; /* less than an interval's worth so far: it waits, like any thread's */
  int n = 0;
  if (rounds.cfg.thread_roots) { /* like every thread's: "[sampler tid=N]" */
    char root[48];
    int len = snprintf(root, sizeof root, "[sampler tid=%d]", (int)rounds.self);
    rounds.fbuf[n++] = intern_string(root, (size_t)len);
  }
  rounds.fbuf[n++] = rounds.id_self;
  uint64_t cpu = sampler_cpu_ns - rounds.self_cpu_recorded;
  store(NULL, n, units, cpu, rounds.round_ns);
  rounds.self_units_given += units;
  rounds.self_cpu_recorded = sampler_cpu_ns;
}

/* Wall clock: keeps the stack just stored (rounds.fbuf[0..n)) as the thread's last. */
static void keep_last(struct thread_book *b, int n) {
  if (n > b->cap_last) {
    uint32_t *p = realloc(b->last, (size_t)n * 2 * sizeof *p);
    if (!p) {
      b->nlast = 0; /* the next round asks it again */
      return;
    }
    b->last = p;
    b->cap_last = n * 2;
  }
  memcpy(b->last, rounds.fbuf, (size_t)n * sizeof *rounds.fbuf);
  b->nlast = n;
}

void record_again(const struct thread_slot *s, struct thread_book *b, uint64_t units) {
  store_last(s, b, units, 0);
  rounds.st.wall_reused += units;
}

/* A thread that registers with less CPU than this is new (see record_ended). */
#define FRESH_THREAD_CPU_NS 1000000u

/* The CPU of threads that ended before any capture, pooled: all of it goes into the profile's
 * CPU weights, under [thread ended before it was sampled] below the root of the thread whose
 * end stores it. Its samples: a thread the sampler looked at (b) had a random phase of its own,
 * and gets what that phase makes due (`owed`: its CPU / interval in expectation, as every
 * thread does — most draw none); one that ended before our first look (no b) had none, and
 * the pool of such threads' CPU gets a sample each time it crosses an interval boundary, after
 * a random phase of the pool's. (Pooling the CPU of threads that had drawn no sample by their
 * own phase counted it twice: at 10 ms, 400 threads of ~2 ms each got 1.7x their share.)
 * Threads that end before our first look have no phase: alone, one of 300 us at 1 ms would get
 * no sample ever; pooled, every such CPU is in the profile. */
static void record_unsampled(const struct thread_slot *s, struct thread_book *b, uint64_t cpu,
                             uint64_t owed) {
  rounds.st.unsampled_threads++;
  rounds.unsampled.cpu += cpu;
  if (!b) rounds.unsampled.unphased += cpu;
  uint64_t crossed = (rounds.unsampled.unphased + rounds.unsampled.phase) / rounds.cfg.interval_ns -
                     rounds.unsampled.given;
  if (!owed && !crossed) return; /* its CPU waits in the pool for the next sample */
  store_marker(s, b, rounds.id_unsampled, owed + crossed,
               rounds.unsampled.cpu - rounds.unsampled.captured);
  rounds.unsampled.given += crossed;
  rounds.unsampled.captured = rounds.unsampled.cpu;
  rounds.st.unsampled_units += owed + crossed;
}

void record_ended(const struct thread_slot *s, struct thread_book *b, uint64_t end_cpu) {
  /* registered as it started, while this profile was taken: its CPU from its start to our
   * first look is this profile's too. A new thread reaches its ThreadStart with ~40 us of CPU
   * (the JVM setting it up): counted from 0. A thread attached again (the main thread as
   * DestroyJavaVM) carries its earlier life's CPU, already sampled: counted from then. */
  int born = s->born_ns && s->born_ns >= rounds.base_wall;
  uint64_t from = s->born_cpu < FRESH_THREAD_CPU_NS ? 0 : s->born_cpu;
  if (b->gen != s->gen) { /* ended before our first look */
    if (born && end_cpu > from) record_unsampled(s, NULL, end_cpu - from, 0);
    return;
  }
  b->cum += b->credit; /* what its last capture measured and no look counted yet */
  b->credit = 0;
  if (end_cpu && b->have_base && end_cpu > b->cpu_base) {
    b->cum += end_cpu - b->cpu_base;
    b->cpu_base = end_cpu;
  }
  uint64_t before = end_cpu && born && b->have_base && b->first_base > from
                        ? b->first_base - from
                        : 0; /* from its start to our first look */
  b->defer_since = 0;
  uint64_t due = (b->cum + before + b->phase) / rounds.cfg.interval_ns - b->units_given;
  b->units_given += due;
  if (b->nlast <= 0) { /* never caught */
    uint64_t cpu = b->cum + before - b->cum_captured;
    b->cum_captured = b->cum;
    if (cpu || due) record_unsampled(s, b, cpu, due);
    return;
  }
  if (!due) return;
  store_last(s, b, due, b->cum - b->cum_captured + before);
  b->cum_captured = b->cum;
  rounds.st.ended_units += due;
}

void record_timer_ended(const struct thread_slot *s, struct thread_book *b) {
  if (b->nlast > 0) {
    store_last(s, b, b->req_units, b->req_cpu);
    rounds.st.ended_units += b->req_units;
  } else { /* its first capture was still to come */
    store_marker(s, b, rounds.id_unsampled, b->req_units, b->req_cpu);
    rounds.st.unsampled_units += b->req_units;
  }
  b->req_units = b->req_cpu = 0;
  b->via_timer = 0;
}

void record_lost(const struct thread_slot *s, struct thread_book *b) {
  if (!b->req_units && !b->req_cpu) return;
  store_marker(s, b, rounds.id_lost, b->req_units, b->req_cpu);
  rounds.st.lost_units += b->req_units;
  rounds.st.lost_cpu_ns += b->req_cpu;
  b->req_units = b->req_cpu = 0;
}

void record_withheld(const struct thread_slot *s, struct thread_book *b) {
  rounds.st.sig_withheld++;
  b->ambiguous += b->req_ambiguous; /* not judged: it waits for a capture */
  b->req_ambiguous = 0;
  if (!b->req_units && !b->req_cpu) return;
  store_marker(s, b, rounds.id_sig_blocked, b->req_units, b->req_cpu);
  rounds.st.sig_blocked_units += b->req_units;
  rounds.st.sig_blocked_cpu_ns += b->req_cpu;
  b->req_units = b->req_cpu = 0;
}

/* The code cache's nmethod that holds pc (or whose blob is at pc) into the map, unless the map
 * has it (the same compilation: renewed); counts what went in. The sampler thread's layout bound
 * for the run when the code cache is the source, else bound for the call. */
static void learn_at(uintptr_t pc) {
  const struct codecache_layout *l =
      rounds.from_cache ? &rounds.cache_own : atomic_load(&rounds.codecache);
  struct codemap_cache_stats cs;
  if (l && codemap_add_cache_at(l, pc, &cs) == 0 && cs.added) {
    rounds.st.code_learned += cs.added;
    rounds.learned_since += cs.added;
  }
}

#define LOOKED_SLOTS 1024         /* methods whose code was looked at lately (a power of 2) */
#define LOOK_AGAIN_NS 50000000ull /* a method's code is looked at again after this much */
static struct {
  jmethodID m;
  uint64_t until; /* rounds.round_ns before which m is not looked at again */
} looked[LOOKED_SLOTS];

/* With the code cache as the source (no CompiledMethodLoad), after a walked stack's frame kinds
 * were judged (kinds): the code of what was called interpreted, into the map — code compiled
 * during the run, which the map would otherwise learn of at the next walk of the code cache only.
 * The code at the top frame's pc when the map has none there, whatever the index said (its
 * methods may be known from other compilations: the pc says which code ran); for every frame
 * called interpreted, its method's current code (Method::_code: two reads, the jmethodID's Method* and its _code), at
 * most once in LOOK_AGAIN_NS for a method (an interpreted loop's frame or a thread's root would
 * otherwise cost them at every sample): a method compiled meanwhile is called interpreted for
 * that long at most. Frames judged compiled or inlined cost nothing here. Returns how many
 * nmethods went in (the caller judges again). */
static uint64_t learn_frames(const struct sample_record *r, const unsigned char *kinds) {
  struct codemap_hit hit;
  uint64_t before = rounds.st.code_learned;
  const asgct_frame *f = r->walk->frames;
  if (f[0].lineno != -3 && !codemap_lookup(r->pc, &hit)) learn_at(r->pc);
  for (int i = 0; i < r->num_frames; i++) {
    jmethodID m = f[i].method_id;
    if (kinds[i] != CODEMAP_FRAME_INTERPRETED || !m) continue;
    uint64_t h = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ull;
    size_t k = (size_t)(h >> 32) & (LOOKED_SLOTS - 1);
    if (looked[k].m == m && rounds.round_ns < looked[k].until) continue;
    looked[k].m = m;
    looked[k].until = rounds.round_ns + LOOK_AGAIN_NS;
    uintptr_t nm = codecache_method_code(&rounds.cache_own, (void *)m);
    if (nm) learn_at(nm);
  }
  return rounds.st.code_learned - before;
}

/* The frames of a walked stack (or of a failed walk's recovery) after the root; returns the
 * frame count. */
static int walked_frames(const struct sample_record *r, int n, int code) {
  struct sampler_counters *st = &rounds.st;
  if (r->num_frames > 0) {
    if (rounds.cfg.ann) {
      codemap_frame_kinds(r->pc, r->walk->frames, r->num_frames, rounds.kinds);
      if (rounds.from_cache &&
          learn_frames(r, rounds.kinds)) /* judged again with what it learned */
        codemap_frame_kinds(r->pc, r->walk->frames, r->num_frames, rounds.kinds);
    }
    for (int i = r->num_frames - 1; i >= 0; i--)
      rounds.fbuf[n++] = method_frame(r->walk->frames[i].method_id, r->walk->frames[i].lineno,
                                      rounds.cfg.ann ? rounds.kinds[i] : 0);
    if (r->recovered ==
        RECOVERY_STUB_CALLER) { /* walked from the stub's caller: the stub is where the CPU was */
      st->recovered_stub++;
      rounds.fbuf[n++] = r->walk->hit.name_id;
    } else if (r->recovered ==
               RECOVERY_ANCHOR) { /* VM code called from Java (a stub, the interpreter) */
      st->recovered_anchor++;
      if (r->walk->hit.kind == CODEMAP_STUB &&
          !r->walk->hit.interpreter) /* its frame is the _[0] one */
        rounds.fbuf[n++] = r->walk->hit.name_id;
      if (r->nnative <= 0) rounds.fbuf[n++] = rounds.id_jvm; /* else the native frames say where */
    } else if (r->recovered == RECOVERY_SAME_CALL) { /* still in the call it was walked in */
      st->recovered_same_call++;
      if (r->nnative <= 0) rounds.fbuf[n++] = rounds.id_jvm;
    } else if (r->recovered == RECOVERY_NATIVE_CALLER) { /* the native frames follow */
      if (r->fail_code > 0)
        st->rewalked_native++;
      else
        st->recovered_native++;
    }
  } else if (r->walk->hit.kind == CODEMAP_NMETHOD) {
    /* in compiled code it could not walk: the method, with the inline chain at the PC */
    st->attributed_code++;
    rounds.fbuf[n++] = rounds.id_truncated; /* the callers are missing below it, not above */
    if (r->walk->hit.ninline == 0)
      rounds.fbuf[n++] = method_frame(r->walk->hit.method, -1, CODEMAP_FRAME_JIT);
    for (int i = r->walk->hit.ninline - 1; i >= 0; i--) { /* the outermost owns the code */
      int owner =
          i == r->walk->hit.ninline - 1 && r->walk->hit.inl_method[i] == r->walk->hit.method;
      rounds.fbuf[n++] = method_frame(r->walk->hit.inl_method[i], r->walk->hit.inl_bci[i],
                                      owner ? CODEMAP_FRAME_JIT : CODEMAP_FRAME_INLINED);
    }
  } else if (code == ASGCT_NOT_JAVA_THREAD && r->nnative > 0) {
    /* a thread with no Java frames (the JVM's own): its native frames are its stack */
  } else {
    const char *f = asgct_code_frame(code);
    rounds.fbuf[n++] = intern_string(f, strlen(f));
    if (r->walk->hit.kind == CODEMAP_STUB) { /* at least which stub */
      st->named_stub++;
      rounds.fbuf[n++] = r->walk->hit.name_id;
    } else if (r->walk->hit.kind == CODEMAP_NONE) {
      stub_unknown(r->pc); /* a stub made since the run's replay? */
    }
  }
  return native_frames(r, n, rounds.cfg.depth * 2 + 8);
}

/* The handler found code in the code cache that the map did not have (r->cache_code, code
 * compiled since the map last heard), or that the map held as another compilation (code_stale):
 * into the map with its records, unless its event came meanwhile — the next sample there is a
 * map hit, and the frame kinds know it. */
static void learn_code(uintptr_t code) {
  struct codemap_hit hit;
  rounds.st.code_found_late++;
  /* a compiled method the map holds from the code cache: the same compilation is renewed, not
   * read; another one (the handler found it stale) replaces it */
  if (!codemap_lookup(code, &hit) || (rounds.from_cache && hit.compile_id > 0)) learn_at(code);
}

#define STUBS_ASKED 64 /* code blobs a replay was asked for lately (a ring) */
static struct {
  uintptr_t blob[STUBS_ASKED];
  unsigned next;
} asked;

/* A walk that failed at pc, which the map does not know: when pc lies in generated code of
 * HotSpot's code cache (not an nmethod: a stub, an adapter) the stubs' replay is asked for
 * (run.c stub_replay) — once for a blob, whether or not the replay names it (the gaps between
 * StubRoutines' stubs are in no stub). With the code cache as the source only: the stubs'
 * event is off during such a run. */
static void stub_unknown(uintptr_t pc) {
  struct codecache_blob b;
  if (!rounds.from_cache || !pc || codecache_find(&rounds.cache_own, pc, &b) != 0 || b.is_nmethod)
    return;
  for (unsigned i = 0; i < STUBS_ASKED; i++)
    if (asked.blob[i] == b.blob) return;
  asked.blob[asked.next++ % STUBS_ASKED] = b.blob;
  rounds.stubs_wanted = 1;
}

static int waiting(int state) {
  return state != SAMPLER_STATE_UNKNOWN && state != SAMPLER_STATE_RUNNABLE;
}

/* Wall clock: the JVM's state of the thread for the capture r. It was read when the request
 * was sent; a thread that went into a wait (or left one) before the signal reached it — a
 * sleeper between two sleeps — has its state read again, and the one that agrees with where
 * the signal found it (in the kernel or not) is taken. A wrong one would not stay one sample:
 * the stack is given again for as long as the thread does not run. */
static int answer_state(const struct thread_slot *s, const struct thread_book *b,
                        const struct sample_record *r) {
  int state = b->req_state;
  if (waiting(state) == !!r->in_syscall || !s->handle || !rounds.state_fn) return state;
  int now = rounds.state_fn(rounds.state_ctx, s->handle);
  return waiting(now) == !!r->in_syscall ? now : state;
}

/* The thread's CPU up to capture r: from the look that sent the request to the handler's
 * entry it is the thread's own (while our signal was on its way: ~15-30 us of a busy
 * thread's millisecond, dropped before), counted at its next look; the handler's own time is
 * ours. The handler reads the thread's CPU clock only as it leaves: its own time is taken as
 * its wall time (entry to exit, read anyway), so a handler that was preempted credits less,
 * never more. A capture that found the thread blocked: what it used since the look was our
 * signal waking it. */
static void answer_cpu(struct thread_book *b, const struct sample_record *r) {
  uint64_t walk = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
  if (!rounds.cfg.wall && r->cpu_exit && !r->in_syscall && !r->dropped && b->have_base &&
      r->cpu_exit > b->cpu_base + walk)
    b->credit += r->cpu_exit - walk - b->cpu_base;
  if (r->cpu_exit > b->cpu_base) b->cpu_base = r->cpu_exit;
}

void record_answer(struct thread_slot *s, struct thread_book *b, uint32_t w) {
  const struct sample_record *r = s->record;
  struct sampler_counters *st = &rounds.st;
  hist_add(&rounds.cost, r->end_ns - r->start_ns);
  if (r->end_ns > r->start_ns) st->handler_ns += r->end_ns - r->start_ns;
  if (r->by_timer) /* its latency is the tick's, not a signal's */
    st->timer_captures++;
  else if (r->start_ns >= b->sent_ns)
    hist_add(&rounds.latency, r->start_ns - b->sent_ns);
  if (b->req_tick + 1 < rounds.round) st->late++; /* not answered by the round after it */

  answer_cpu(b, r);

  if (r->dropped) {
    record_lost(s, b);
  } else if (!r->walked) {
    st->skipped_regs++; /* registers unchanged: it has not run */
  } else {
    int code = r->num_frames > 0 ? (r->recovered ? r->fail_code : 1) : r->num_frames;
    if (code <= 0 && code <= -ASGCT_NCODES) code = ASGCT_NOT_JAVA_THREAD;
    if (!s->env)
      st->jvm_thread_samples++; /* nothing for AsyncGetCallTrace to walk */
    else
      st->asgct[code > 0 ? 0 : 1 - code]++;         /* what AsyncGetCallTrace answered first */
    if (!s->stack_hi && r->sp && !b->stack_asked) { /* once: the walk reads only on its stack */
      b->stack_asked = 1;
      plat_mapping_of(r->sp, &s->stack_lo, &s->stack_hi);
    }
    if (r->cache_code) learn_code(r->cache_code);
    int n = walked_frames(r, begin_stack(s, b), code);
    if (rounds.cfg.wall) { /* the state: what the JVM says, else whether it was in the kernel */
      int state = answer_state(s, b, r);
      if (!waiting(state))
        rounds.fbuf[n++] =
            r->in_syscall ? rounds.id_syscall : rounds.id_state[SAMPLER_STATE_RUNNABLE];
      else
        rounds.fbuf[n++] = rounds.id_state[state];
      st->blocked += r->in_syscall;
    } else if (r->in_syscall) {
      rounds.fbuf[n++] = rounds.id_blocked;
      st->blocked++;
    }
    if (r->num_frames <= 0 && r->walk->hit.kind != CODEMAP_NMETHOD && r->nnative <= 0)
      st->unwalked_cpu_ns += b->req_cpu; /* its CPU is in the profile, but nowhere in particular */
    uint64_t units = rounds.cfg.hasrun == SAMPLER_HASRUN_REGS ? 1 : b->req_units;
    store(s, n, units, b->req_cpu, r->start_ns ? r->start_ns : rounds.round_ns);
    st->samples++;
    keep_last(b, n); /* wall clock: given again; cpu: the stack a thread that ends keeps */
  }
  /* auto: tiny deltas after we woke it count only if the thread really moved */
  if (b->req_ambiguous) {
    if (!r->moved && r->in_syscall) {
      st->ambiguous_dropped_ns += b->req_ambiguous;
    } else {
      st->ambiguous_kept_ns += b->req_ambiguous;
      b->cum += b->req_ambiguous;
    }
    b->req_ambiguous = 0;
  }
  b->last_blocked = r->in_syscall;
  b->woken = r->in_syscall;
  b->req_units = b->req_cpu = 0;
  handshake_collected(&s->handshake, w);
}

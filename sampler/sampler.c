/*
 * sampler.c — the sampler thread's loop (see sampler.h for the ThreadHasRun evidence).
 *
 * One round ("tick") is one pass over the registry. For each thread:
 *  1. record its answer to the previous request, if it has answered: frames -> interned names
 *     -> the trace table;
 *  2. decide from the evidence whether to ask it for a sample now, and if so set its request
 *     PENDING and signal it — holding the slot's lock, so the thread cannot finish leaving
 *     between the check and the signal.
 * A request still open at the next round stays open; the thread is not asked again until it
 * has answered, and its answer is recorded when it comes (the wait is bounded by the round:
 * the sampler never blocks on a thread). Nothing is dropped silently: failures are recorded
 * under named frames and counted.
 */
#include "sampler.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "codemap.h"
#include "handler.h"
#include "platform.h"
#include "registry.h"
#include "traces.h"

/* CPU deltas at most this large, right after we signalled a thread that was blocked, may be
 * our own doing (sigreturn, re-entering the system call); the checksum decides (auto). */
#define AMBIGUOUS_NS 20000u
/* How long a due sample may wait for its thread to be caught running (see decide). */
#define MAX_DEFER_NS 500000000u
/* Longest idle back-off between two looks at a thread's CPU clock. */
#define MAX_BACKOFF_NS 50000000u
#define MAX_BACKOFF_TICKS 63u /* with few threads; see decide() */

static struct {
  struct sampler_config cfg;
  sampler_method_name_fn name_fn;
  void *name_ctx;
  struct sampler_stats st;
  uint32_t *fbuf;     /* frame ids of one capture: depth + root + stub/label frames */
  unsigned char *kinds; /* with ann: the kind of each frame of one capture (codemap_frame_kind) */
  uint64_t *look;     /* per slot: the tick before which an idle thread needs no look */
  int look_cap;
  int seen_registered;/* registry_registered() at the last round */
  char *namebuf;
  uint32_t id_lost, id_blocked, id_unknown_method, id_truncated, id_jvm;
  _Atomic uint32_t stop; /* futex word */
  _Atomic int running;
  uint64_t max_backoff;
} S;

#define NAMEBUF_LEN 4096

int sampler_init(const struct sampler_config *c, asgct_fn asgct, JavaVM *vm,
                 sampler_method_name_fn name_fn, void *name_ctx) {
  S.cfg = *c;
  S.name_fn = name_fn;
  S.name_ctx = name_ctx;
  free(S.fbuf); /* a second init (tests) replaces the first */
  free(S.namebuf);
  free(S.kinds);
  S.fbuf = malloc(((size_t)c->depth + CODEMAP_MAX_INLINE + 8) * sizeof *S.fbuf);
  S.namebuf = malloc(NAMEBUF_LEN);
  S.kinds = malloc((size_t)c->depth);
  if (!S.fbuf || !S.namebuf || !S.kinds) return -ENOMEM;
  int err = registry_init(c->depth);
  if (!err) err = traces_init();
  if (err) return err;
  S.id_lost = traces_intern("[sample lost]", 13);
  S.id_blocked = traces_intern("[cpu before wait]", 17);
  S.id_unknown_method = traces_intern("[unknown method]", 16);
  S.id_truncated = traces_intern("[callers not walked]", 20);
  S.id_jvm = traces_intern("[JVM runtime]", 13);
  S.max_backoff = MAX_BACKOFF_NS / c->interval_ns;
  if (S.max_backoff > MAX_BACKOFF_TICKS) S.max_backoff = MAX_BACKOFF_TICKS;
  return handler_install(c->sig, asgct, vm);
}

const struct sampler_stats *sampler_stats(void) { return &S.st; }

/* ---- recording (sampler thread, traces_lock held) ---- */

/* The frame id of method m at bytecode index bci (the line matters only with `lines`) running
 * as `kind` (enum codemap_frame_kind; annotated only with `ann`). */
static uint32_t method_frame(jmethodID m, jint bci, int kind) {
  static const char *const suffix[] = {"", "_[j]", "_[i]", "_[0]"};
  if (!m) return S.id_unknown_method;
  uint64_t key = (uint64_t)(uintptr_t)m;
  /* jmethodIDs are aligned user-space pointers (< 2^48): the kind goes in the low two bits;
   * with lines, a bytecode index (16 bits) below them — anything else (native frames: -3)
   * gets no line */
  if (!S.cfg.ann || (key & 3)) kind = CODEMAP_FRAME_NATIVE;
  key |= (uint64_t)kind;
  if (!S.cfg.lines || bci < 0 || bci > 0xffff || key >> 48) bci = -1;
  else key = key << 16 | (uint64_t)bci;
  uint32_t id = traces_key_get(key);
  if (id != TRACES_NO_ID) return id;
  if (S.name_fn(S.name_ctx, m, bci, S.namebuf, NAMEBUF_LEN - 8) != 0) return S.id_unknown_method;
  strcat(S.namebuf, suffix[kind]);
  id = traces_intern(S.namebuf, strlen(S.namebuf));
  if (id == TRACES_NO_ID) return S.id_unknown_method;
  traces_key_put(key, id);
  return id;
}

/* Puts the thread root frame (when enabled) into fbuf; returns the frame count. */
static int begin_stack(struct reg_slot *s) {
  if (!S.cfg.thread_roots) return 0;
  if (s->priv.root_id == TRACES_NO_ID) {
    char buf[REG_NAME_MAX + 32];
    int n = snprintf(buf, sizeof buf, "[%s tid=%d]", s->name, (int)s->tid);
    s->priv.root_id = traces_intern(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
  }
  S.fbuf[0] = s->priv.root_id;
  return 1;
}

static void store(int n, uint64_t units, uint64_t cpu_ns) {
  if (traces_add(S.fbuf, n, units, cpu_ns) != 0) {
    S.st.store_failed++;
    return;
  }
  S.st.units += units;
  S.st.cpu_ns += cpu_ns;
}

/* Units owed for a request whose sample could not be taken: kept under [sample lost]. */
static void record_lost(struct reg_slot *s) {
  struct reg_private *p = &s->priv;
  if (!p->req_units && !p->req_cpu) return;
  int n = begin_stack(s);
  S.fbuf[n++] = S.id_lost;
  store(n, p->req_units, p->req_cpu);
  S.st.lost_units += p->req_units;
  p->req_units = p->req_cpu = 0;
}

/* Records the DONE answer of slot s and sets it IDLE. */
static void record(struct reg_slot *s, uint32_t w) {
  struct reg_private *p = &s->priv;
  hist_add(&S.st.cost, s->end_ns - s->start_ns);
  if (s->start_ns >= p->sent_ns) hist_add(&S.st.latency, s->start_ns - p->sent_ns);
  if (p->req_tick + 1 < S.st.ticks) S.st.late++; /* not answered by the round after it */

  if (s->cpu_exit > p->cpu_base)
    p->cpu_base = s->cpu_exit; /* what the signal and the handler cost it is ours, not its */

  if (s->wrong_thread) {
    record_lost(s);
  } else if (!s->walked) {
    S.st.skipped_regs++; /* registers unchanged: it has not run */
  } else {
    int n = begin_stack(s);
    int code = s->num_frames > 0 ? (s->recovered ? s->fail_code : 1) : s->num_frames;
    if (code <= 0 && code <= -ASGCT_NCODES) code = ASGCT_NOT_JAVA_THREAD;
    S.st.asgct[code > 0 ? 0 : 1 - code]++; /* what AsyncGetCallTrace answered first */
    if (s->num_frames > 0) {
      if (S.cfg.ann) codemap_frame_kinds(s->pc, s->frames, s->num_frames, S.kinds);
      for (int i = s->num_frames - 1; i >= 0; i--)
        S.fbuf[n++] = method_frame(s->frames[i].method_id, s->frames[i].lineno, S.cfg.ann ? S.kinds[i] : 0);
      if (s->recovered == REC_STUB_CALLER) { /* walked from the stub's caller: the stub is where the CPU was */
        S.st.recovered_stub++;
        S.fbuf[n++] = traces_intern(s->hit.name, strlen(s->hit.name));
      } else if (s->recovered == REC_ANCHOR) { /* VM code called from Java (a stub, the interpreter) */
        S.st.recovered_anchor++;
        if (s->hit.kind == CODEMAP_STUB && !s->hit.interpreter) /* its frame is the _[0] one */
          S.fbuf[n++] = traces_intern(s->hit.name, strlen(s->hit.name));
        S.fbuf[n++] = S.id_jvm;
      }
    } else if (s->hit.kind == CODEMAP_NMETHOD) {
      /* in compiled code it could not walk: the method, with the inline chain at the PC */
      S.st.attributed_code++;
      S.fbuf[n++] = S.id_truncated; /* the callers are missing below it, not above */
      if (s->hit.ninline == 0) S.fbuf[n++] = method_frame(s->hit.method, -1, CODEMAP_FRAME_JIT);
      for (int i = s->hit.ninline - 1; i >= 0; i--) { /* the outermost owns the code */
        int owner = i == s->hit.ninline - 1 && s->hit.inl_method[i] == s->hit.method;
        S.fbuf[n++] = method_frame(s->hit.inl_method[i], s->hit.inl_bci[i], owner ? CODEMAP_FRAME_JIT : CODEMAP_FRAME_INLINED);
      }
    } else {
      const char *f = asgct_code_frame(code);
      S.fbuf[n++] = traces_intern(f, strlen(f));
      if (s->hit.kind == CODEMAP_STUB) { /* at least which stub */
        S.st.named_stub++;
        S.fbuf[n++] = traces_intern(s->hit.name, strlen(s->hit.name));
      }
    }
    if (s->in_syscall) {
      S.fbuf[n++] = S.id_blocked;
      S.st.blocked++;
    }
    uint64_t units = S.cfg.hasrun == SAMPLER_HASRUN_REGS ? 1 : p->req_units;
    store(n, units, p->req_cpu);
    S.st.samples++;
  }
  /* auto: tiny deltas after we woke it count only if the thread really moved */
  if (p->req_ambiguous) {
    if (!s->moved && s->in_syscall) {
      S.st.ambiguous_dropped_ns += p->req_ambiguous;
    } else {
      S.st.ambiguous_kept_ns += p->req_ambiguous;
      p->cum += p->req_ambiguous;
    }
    p->req_ambiguous = 0;
  }
  p->last_blocked = s->in_syscall;
  p->req_units = p->req_cpu = 0;
  atomic_store(&s->req, (REQ_SEQ(w) << 3) | REQ_IDLE);
}

/* ---- deciding (sampler thread, slot lock held) ---- */

/* 1 when the kernel says thread s is running or runnable, 0 when it is blocked, -1 unknown.
 * Reads /proc/self/task/<tid>/stat — opened and closed each time: keeping one descriptor per
 * thread open could take file descriptors the application needs (~6 us; only for part-time
 * threads with a sample due). */
static int thread_running(const struct reg_slot *s) {
  char buf[512];
  snprintf(buf, sizeof buf, "/proc/self/task/%d/stat", (int)s->tid);
  int fd = open(buf, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
  if (!paren || paren[1] != ' ' || !paren[2]) return -1;
  return paren[2] == 'R';
}

/* Returns 1 and the mode when thread s should be asked for a sample this tick. */
static int decide(struct reg_slot *s, int *mode) {
  struct reg_private *p = &s->priv;
  if (S.cfg.hasrun == SAMPLER_HASRUN_REGS) {
    *mode = REQ_IF_MOVED;
    return 1;
  }
  if (S.st.ticks < p->next_look) {
    S.st.skipped_idle++;
    return 0;
  }
  uint64_t cpu;
  S.st.looks++;
  int rc = plat_thread_cpu_ns(s->tid, &cpu);
  if (rc == -EINVAL || rc == -ESRCH) return 0; /* exiting; its ThreadEnd is on the way */
  if (rc != 0) {
    S.st.clock_errors++;
    if (S.cfg.hasrun != SAMPLER_HASRUN_AUTO) return 0;
    *mode = REQ_IF_MOVED; /* no CPU evidence: the checksum decides */
    return 1;
  }
  uint64_t d = 0;
  if (p->have_base && cpu > p->cpu_base) d = cpu - p->cpu_base;
  if (!p->have_base || cpu > p->cpu_base) p->cpu_base = cpu;
  p->have_base = 1;
  if (d == 0) {
    S.st.skipped_cpu++;
    p->idle_streak++;
    /* Idle back-off: 0, 1, 3, 7 ... rounds, up to MAX_BACKOFF_NS — or longer when there are
     * so many threads that their looks alone would cost more than ~8 clock reads a round:
     * the cost of a round stays with the threads that run, whatever the number that sleep. */
    uint64_t cap = S.max_backoff, fair = (uint64_t)registry_live() / 8;
    if (cap < fair) cap = fair;
    uint64_t back = p->idle_streak >= 20 ? cap : (1ull << (p->idle_streak - 1)) - 1;
    if (back > cap) back = cap;
    if (p->defer_since) back = 0; /* a due sample waits for it to run: look every round */
    p->next_look = S.st.ticks + 1 + back;
    return 0;
  }
  p->idle_streak = 0;
  p->next_look = 0;
  if (S.cfg.hasrun == SAMPLER_HASRUN_AUTO && p->last_blocked && d <= AMBIGUOUS_NS)
    p->ambiguous += d;
  else
    p->cum += d;
  uint64_t due = p->cum / S.cfg.interval_ns - p->units_given;
  if (due == 0) {
    S.st.skipped_cpu++; /* ran, but less than an interval's worth so far */
    return 0;
  }
  /* Catch it running. A thread that used less than half the interval since the last look, or
   * that its last sample found blocked, may be blocked again. Signalling it then would only
   * show where it waits — and worse, wake it: a thread parked in LockSupport.parkNanos or Object.wait returns early when a
   * signal interrupts its futex (spurious wake-ups are allowed), which shifts the program's
   * timing. So while the kernel says it is blocked, the due sample waits (its units keep
   * accruing) for a round that finds it running — at most MAX_DEFER_NS, after which it is taken
   * where the thread is, with a [cpu before wait] leaf. Busy threads skip the check. */
  if (S.cfg.hasrun == SAMPLER_HASRUN_AUTO && (d < S.cfg.interval_ns / 2 || p->last_blocked) &&
      thread_running(s) == 0) {
    if (!p->defer_since) p->defer_since = S.st.ticks + 1;
    if ((S.st.ticks + 1 - p->defer_since) * S.cfg.interval_ns < MAX_DEFER_NS) {
      S.st.deferred++;
      return 0;
    }
  }
  p->defer_since = 0;
  p->req_units = due;
  p->units_given += due;
  p->req_cpu = p->cum - p->cum_captured;
  p->cum_captured = p->cum;
  p->req_ambiguous = p->ambiguous;
  p->ambiguous = 0;
  *mode = REQ_CAPTURE;
  return 1;
}

static void reset_private(struct reg_slot *s) {
  memset(&s->priv, 0, sizeof s->priv);
  s->priv.gen = s->gen;
  s->priv.root_id = TRACES_NO_ID;
}

/* ---- the loop ---- */

/* One round: a single pass over the registry that records the answers to the previous
 * round's requests and sends this round's. The answers need no wait of their own: a thread
 * answers within microseconds of being signalled, long before the next round, and one that
 * has not (not scheduled, signals blocked) is simply skipped until it has. Waiting for the
 * acknowledgements inside the round was measured to cost the sampler thread one extra
 * sleep/wake-up (~20 us of CPU per round on this 2-vCPU VM) for no gain in accuracy. */
static void tick(void) {
  int limit = registry_limit();
  int regs = S.cfg.hasrun == SAMPLER_HASRUN_REGS;
  if (limit > S.look_cap) {
    uint64_t *l = realloc(S.look, (size_t)limit * 2 * sizeof *l);
    if (l) {
      memset(l + S.look_cap, 0, (size_t)(limit * 2 - S.look_cap) * sizeof *l);
      S.look = l;
      S.look_cap = limit * 2;
    }
  }
  /* Idle threads in back-off are skipped from a compact array, without touching their slots,
   * so that a round costs the threads that run, not the ones that sleep — unless a slot got a
   * new owner since the last round: then every slot is visited. */
  int any_new = registry_registered() != S.seen_registered;
  S.seen_registered = registry_registered();
  int compact = !regs && !any_new && limit <= S.look_cap;
  traces_lock();
  for (int i = 0; i < limit; i++) {
    if (compact && S.st.ticks < S.look[i]) {
      S.st.skipped_idle++;
      continue;
    }
    struct reg_slot *s = registry_slot(i);
    uint32_t w = atomic_load_explicit(&s->req, memory_order_acquire);
    int st = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (st != REG_LIVE) {
      /* the thread left: collect its last answer, or withdraw a request it will never see */
      if (REQ_STATE(w) == REQ_PENDING && s->priv.gen == s->gen &&
          atomic_compare_exchange_strong(&s->req, &w, (REQ_SEQ(w) << 3) | REQ_IDLE)) {
        S.st.unanswered++;
        record_lost(s);
      }
      if (REQ_STATE(w) != REQ_DONE) continue;
    }
    /* backed-off idle thread: nothing to do, not even the lock */
    if (!regs && REQ_STATE(w) == REQ_IDLE && s->priv.gen == s->gen && S.st.ticks < s->priv.next_look) {
      S.st.skipped_idle++;
      continue;
    }
    pthread_mutex_lock(&s->lock);
    w = atomic_load_explicit(&s->req, memory_order_acquire);
    if (s->priv.gen != s->gen) {
      reset_private(s);
    } else if (REQ_STATE(w) == REQ_DONE) {
      record(s, w);
      w = atomic_load_explicit(&s->req, memory_order_relaxed);
    }
    int mode;
    if (atomic_load(&s->state) != REG_LIVE) {
      /* left: nothing to send */
    } else if (REQ_STATE(w) == REQ_PENDING || REQ_STATE(w) == REQ_BUSY) {
      S.st.outstanding++;
    } else if (decide(s, &mode)) {
      s->mode = mode;
      s->priv.req_tick = S.st.ticks;
      s->priv.sent_ns = plat_mono_ns();
      uint32_t seq = REQ_SEQ(w) + 1;
      atomic_store_explicit(&s->req, (seq << 3) | REQ_PENDING, memory_order_release);
      int rc = plat_signal_thread(s->tid, S.cfg.sig, i);
      if (rc != 0) {
        S.st.lost_send++;
        atomic_store(&s->req, (seq << 3) | REQ_IDLE);
        record_lost(s);
      } else {
        S.st.requests++;
      }
    }
    if (i < S.look_cap) /* only a thread waiting for nothing but its next look is skipped */
      S.look[i] = atomic_load(&s->state) == REG_LIVE && REQ_STATE(atomic_load(&s->req)) == REQ_IDLE &&
                          s->priv.gen == s->gen ? s->priv.next_look : 0;
    pthread_mutex_unlock(&s->lock);
  }
  traces_unlock();
}

/* After the last round: records the answers still to come (waiting at most ~20 ms for
 * them); requests never answered keep their units under [sample lost]. */
static void drain(void) {
  uint64_t deadline = plat_mono_ns() + 20000000;
  for (;;) {
    int open = 0, limit = registry_limit();
    traces_lock();
    for (int i = 0; i < limit; i++) {
      struct reg_slot *s = registry_slot(i);
      pthread_mutex_lock(&s->lock);
      uint32_t w = atomic_load_explicit(&s->req, memory_order_acquire);
      if (s->priv.gen == s->gen) {
        if (REQ_STATE(w) == REQ_DONE) {
          record(s, w);
        } else if (REQ_STATE(w) == REQ_PENDING || REQ_STATE(w) == REQ_BUSY) {
          if (plat_mono_ns() < deadline) {
            open++;
          } else if (REQ_STATE(w) == REQ_PENDING &&
                     atomic_compare_exchange_strong(&s->req, &w, (REQ_SEQ(w) << 3) | REQ_IDLE)) {
            S.st.unanswered++; /* withdrawn: a late signal now finds nothing to do */
            record_lost(s);
          }
        }
      }
      pthread_mutex_unlock(&s->lock);
    }
    traces_unlock();
    if (!open) return;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

/* A xorshift generator for the rounds' jitter (sampler thread only). */
static uint64_t jitter_state = 0x9e3779b97f4a7c15ULL;
static uint64_t jitter(uint64_t span) {
  jitter_state ^= jitter_state << 13;
  jitter_state ^= jitter_state >> 7;
  jitter_state ^= jitter_state << 17;
  return span ? jitter_state % span : 0;
}

int sampler_run(void) {
  atomic_store(&S.running, 1);
  /* our wake-ups exact: no coalescing with the application's timers */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  jitter_state ^= plat_mono_ns();
  handler_set_active(1);
  uint64_t start = plat_mono_ns(), cpu0 = plat_self_cpu_ns();
  uint64_t next = start + S.cfg.interval_ns;
  /* Rounds are jittered by +-interval/16 around their absolute deadlines (no drift): a sampler
   * in lock-step with a periodic program would see it always at the same phase. More jitter
   * makes rounds that carry two intervals of CPU, i.e. fewer stacks per CPU-second: measured
   * with Scenarios spin at 1 ms, +-1/4 gave 915 stacks per CPU-second, +-1/16 982, none 990. */
  uint64_t span = S.cfg.interval_ns / 8;
  uint64_t when = next - span / 2 + jitter(span);
  int expired = 0;
  while (!atomic_load(&S.stop)) {
    uint64_t now = plat_mono_ns();
    if (now < when) {
      plat_futex_wait((const uint32_t *)&S.stop, 0, when - now);
      continue; /* re-check stop and the time */
    }
    if (S.cfg.duration_ns && now - start >= S.cfg.duration_ns) {
      expired = 1;
      break;
    }
    uint64_t c0 = plat_self_cpu_ns();
    tick();
    uint64_t c1 = plat_self_cpu_ns();
    traces_lock();
    S.st.ticks++;
    hist_add(&S.st.tick_cost, c1 - c0);
    S.st.sampler_cpu_ns = c1 - cpu0;
    S.st.wall_ns = plat_mono_ns() - start;
    traces_unlock();
    next += S.cfg.interval_ns;
    now = plat_mono_ns();
    if (now >= next) { /* overran: skip the rounds we missed, keep the phase */
      uint64_t missed = (now - next) / S.cfg.interval_ns + 1;
      S.st.overruns += missed;
      next += missed * S.cfg.interval_ns;
    }
    when = next - span / 2 + jitter(span);
  }
  drain();
  handler_set_active(0);
  traces_lock();
  S.st.sampler_cpu_ns = plat_self_cpu_ns() - cpu0;
  S.st.wall_ns = plat_mono_ns() - start;
  traces_unlock();
  atomic_store(&S.running, 0);
  plat_futex_wake((const uint32_t *)&S.running, 1);
  return expired;
}

void sampler_stop(void) {
  atomic_store(&S.stop, 1);
  plat_futex_wake((const uint32_t *)&S.stop, 1);
  uint64_t deadline = plat_mono_ns() + 1000000000ull;
  while (atomic_load(&S.running) && plat_mono_ns() < deadline)
    plat_futex_wait((const uint32_t *)&S.running, 1, 10000000);
}

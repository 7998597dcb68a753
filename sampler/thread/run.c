/*
 * run.c — the sampler thread's rounds (see types.h for the ThreadHasRun evidence; sthread.h for what the front door calls).
 *
 * One round ("tick") is one pass over the registry. For each thread:
 *  1. record its answer to the previous request, if it has answered (record.c);
 *  2. decide from the evidence whether to ask it for a sample now (schedule.c), and if so set
 *     its request PENDING and signal it — holding the slot's lock, so the thread cannot finish
 *     leaving between the check and the signal. A busy thread's request may instead be left to
 *     a timer on the thread's own CPU clock, which the kernel fires at its next tick on the
 *     thread's CPU (cfg.cpu_timers; signalled after all if no tick catches it running). A
 *     thread that blocks the sampling signal, or has one pending, is not signalled at all (its
 *     /proc status says: may_signal): its due samples are kept under a named frame.
 * A request still open at the next round stays open; the thread is not asked again until it
 * has answered, and its answer is recorded when it comes (the wait is bounded by the round:
 * the sampler never blocks on a thread). Nothing is dropped silently: failures are recorded
 * under named frames and counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "codecache.h"
#include "codemap.h"
#include "guard.h"
#include "handler.h"
#include "hotspot.h"
#include "objects.h"
#include "platform.h"
#include "round.h"
#include "traces.h"

/* An open request older than this is withdrawn (and the thread asked again later): its signal
 * was lost (a non-realtime signal merged with another) or stays blocked, or our handler was
 * replaced. A thread runnable but not on a CPU answers within tens of ms even on a busy host. */
#define REQUEST_TIMEOUT_NS 1000000000ull

/* Most CPU-time timers at a time (each holds one of the user's queued signals). */
#define MAX_TIMERS 1024

/* How long a thread found blocking the sampling signal (or with one pending) goes unsignalled
 * before its status is read again — when a sample of it falls due: 100 ms after it was found,
 * twice as long after each read that finds it so again, up to 1 s. A thread that blocks
 * signals for a moment is sampled again soon; one that blocks them for good (most of those
 * found) costs a read a second (~11 us of CPU) while it runs. */
#define SIG_RECHECK_MIN_NS 100000000ull
#define SIG_RECHECK_MAX_NS 1000000000ull

/* Leaves the open request of busy thread s (slot i) to its CPU-time timer: armed to fire at
 * the next scheduler tick that finds the thread running, on the thread's own CPU — no
 * cross-CPU interrupt for the thread or for us, where a signal costs this VM ~5-20 us of the
 * thread's time. Returns 1 when armed, 0 when the request must be signalled. */
static int arm_timer(int i, const struct thread_slot *s, struct thread_book *b) {
  if (!b->has_timer) {
    if (b->timer_failed || rounds.timers >= MAX_TIMERS ||
        plat_cpu_timer_create(s->tid, rounds.cfg.sig, i, &b->timer) != 0) {
      if (!b->timer_failed) rounds.st.timers_refused++;
      b->timer_failed = 1;
      return 0;
    }
    b->has_timer = 1;
    rounds.timers++;
  }
  if (plat_cpu_timer_arm(b->timer, 1) != 0) { /* its thread has ended */
    round_timer_drop(b);
    b->timer_failed = 1;
    return 0;
  }
  b->via_timer = 1;
  rounds.st.timer_requests++;
  return 1;
}

/* Asks thread s (slot i) for a sample in `mode`. Slot lock held. */
static void request(int i, struct thread_slot *s, struct thread_book *b, uint32_t w, int mode) {
  s->mode = mode;
  b->req_tick = rounds.round;
  b->sent_ns = plat_mono_ns();
  uint32_t seq = handshake_ask(&s->handshake, w);
  b->via_timer = 0;
  if (b->busy && rounds.timer_wait_ns && arm_timer(i, s, b)) return;
  /* a send that failed withdraws the request, it does not store IDLE over it: a late signal of
   * an earlier request (one withdrawn while its signal was queued) may have claimed it
   * meanwhile, and its handler would then write the record while the slot read IDLE and store
   * DONE over a later request. Claimed: it is answered like any other. */
  if (plat_signal_thread(s->tid, rounds.cfg.sig, i) == 0 ||
      !handshake_withdraw(&s->handshake, handshake_word(seq, SAMPLE_PENDING))) {
    rounds.st.requests++;
  } else {
    rounds.st.lost_send++;
    record_lost(s, b);
  }
}

/* Reads what thread s does with the sampling signal (its /proc status) into b: muted when it
 * blocks the signal or has one pending. Returns b->sig_muted. */
static int sig_check(const struct thread_slot *s, struct thread_book *b) {
  uint64_t t0 = plat_mono_ns();
  int state = plat_thread_signal_state(s->tid, rounds.cfg.sig);
  uint64_t t1 = plat_mono_ns();
  rounds.st.sig_checks++;
  rounds.st.sig_check_ns += t1 - t0;
  b->sig_known = 1;
  int muted = state > 0; /* unreadable (gone, no /proc): signalled as before */
  if (muted && !b->sig_muted) {
    rounds.st.sig_blocked_threads++;
    b->sig_backoff_ns = SIG_RECHECK_MIN_NS;
  } else if (muted && b->sig_backoff_ns < SIG_RECHECK_MAX_NS) {
    b->sig_backoff_ns *= 2;
    if (b->sig_backoff_ns > SIG_RECHECK_MAX_NS) b->sig_backoff_ns = SIG_RECHECK_MAX_NS;
  }
  b->sig_muted = muted;
  b->sig_recheck_ns = t1 + b->sig_backoff_ns;
  return muted;
}

/* Whether thread s may be sent the sampling signal (or left to its CPU-time timer, which sends
 * it too): not while it blocks the signal, nor while one is pending for it. Every real-time
 * signal sent queues an entry of its own, counted against the user's RLIMIT_SIGPENDING; a
 * thread that never takes them piles them up — one more per request withdrawn unanswered —
 * until sigqueue and timer_create fail for every process of that user. Many libraries start
 * their workers with every signal blocked, so a thread of no JNIEnv (the JVM's own, a
 * library's: found in /proc/self/task) is read before its first signal; any thread after a
 * request of it went unanswered (tick); a muted one again when a sample of it falls due,
 * SIG_RECHECK_MIN_NS to _MAX_NS after the last read, so that one that unblocks the signal is
 * sampled again. */
static int may_signal(const struct thread_slot *s, struct thread_book *b) {
  if (!b->sig_muted && (b->sig_known || s->env)) return 1;
  if (b->sig_muted && plat_mono_ns() < b->sig_recheck_ns) return 0;
  return !sig_check(s, b);
}

/* Asks thread s (slot i) for the sample schedule_decide found due — unless it may not be
 * signalled: then its units are kept under [not sampled: signal blocked]. Slot lock held. */
static void ask(int i, struct thread_slot *s, struct thread_book *b, uint32_t w, int mode) {
  if (may_signal(s, b))
    request(i, s, b, w, mode);
  else
    record_withheld(s, b);
}

/* Withdraws the PENDING request w of slot s (its thread will never answer it); the units it
 * carried are kept as lost. Returns 1 when withdrawn, 0 when the handler claimed it first. */
static int withdraw(struct thread_slot *s, struct thread_book *b, uint32_t w) {
  if (!handshake_withdraw(&s->handshake, w)) return 0;
  rounds.st.unanswered++; /* a late signal now finds nothing to do */
  record_lost(s, b);
  return 1;
}

/* Withdraws the open request w of slot s, whose thread has ended. One left to the thread's
 * CPU-time timer stood for CPU the thread had used, and it ended before a tick caught it
 * running: the units go to the last stack it was caught in, as a due sample's do
 * (record_ended), or under [thread ended before it was sampled]. Others are kept as lost
 * (withdraw). */
static void withdraw_ended(struct thread_slot *s, struct thread_book *b, uint32_t w) {
  if (b->via_timer && handshake_withdraw(&s->handshake, w)) {
    rounds.st.timer_ended++;
    record_timer_ended(s, b);
    return;
  }
  withdraw(s, b, w);
}

/* The open request w of slot i, left to its thread's CPU-time timer, was not answered within
 * two ticks: the thread blocked, or waits for a CPU. It is signalled like any other now. */
static void timer_fallback(int i, struct thread_slot *s, struct thread_book *b, uint32_t w) {
  b->via_timer = 0;
  plat_cpu_timer_arm(b->timer, 0); /* the signal answers it; the timer need not too */
  rounds.st.timer_fallbacks++;
  b->sent_ns = plat_mono_ns();
  if (plat_signal_thread(s->tid, rounds.cfg.sig, i) == 0) return;
  if (withdraw(s, b, w)) rounds.st.lost_send++;
}

/* The end of the thread of the free slot s (book b, possibly an earlier owner's): the units
 * it was due, and with the CPU clock it left in the slot, the CPU since the last look; the
 * slot can then be reused. traces_lock held. */
static void account_end(struct thread_slot *s, struct thread_book *b) {
  if (!atomic_load(&s->end_cpu) && !(b->gen == s->gen && b->defer_since))
    return;                     /* nothing to account: most free slots, every round */
  pthread_mutex_lock(&s->lock); /* its name and birth stay while we read them */
  uint64_t end = atomic_load(&s->end_cpu);
  if (atomic_load(&s->state) != SLOT_LIVE && !rounds.cfg.wall) record_ended(s, b, end);
  if (end) atomic_store(&s->end_cpu, 0);
  pthread_mutex_unlock(&s->lock);
}

/* One round: a single pass over the registry that records the answers to the previous
 * round's requests and sends this round's. The answers need no wait of their own: a thread
 * answers within microseconds of being signalled, long before the next round, and one that
 * has not (not scheduled, signals blocked) is simply skipped until it has. Waiting for the
 * acknowledgements inside the round was measured to cost the sampler thread one extra
 * sleep/wake-up (~20 us of CPU per round on this 2-vCPU VM) for no gain in accuracy. */
static void tick(void) {
  int limit = registry_limit();
  int regs = rounds.cfg.hasrun == SAMPLER_HASRUN_REGS;
  if (round_reserve(limit) != 0) limit = rounds.cap; /* the rest waits for memory */
  /* Idle threads in back-off are skipped from a compact array, without touching their slots,
   * so that a round costs the threads that run, not the ones that sleep — unless a slot got a
   * new owner since the last round: then every slot is visited. */
  int any_new = registry_registered() != rounds.seen_registered;
  rounds.seen_registered = registry_registered();
  int compact = !regs && !any_new;
  traces_lock();
  for (int i = 0; i < limit; i++) {
    if (compact && rounds.round < rounds.look[i]) {
      rounds.st.skipped_idle++;
      continue;
    }
    struct thread_slot *s = registry_slot(i);
    struct thread_book *b = &rounds.books[i];
    if (!s) break; /* cannot happen below registry_limit() */
    uint32_t w = atomic_load_explicit(&s->handshake, memory_order_acquire);
    int live = atomic_load_explicit(&s->state, memory_order_relaxed) == SLOT_LIVE;
    if (!live) {
      /* the thread left: collect its last answer, or withdraw a request it will never see;
       * then (the round after an answer) account what it did since */
      if (b->gen == s->gen) {
        if (handshake_state(w) == SAMPLE_PENDING) { /* seldom: no lock for every free slot */
          pthread_mutex_lock(&s->lock); /* the slot is not reused while its name is read */
          if (b->gen == s->gen) withdraw_ended(s, b, atomic_load(&s->handshake));
          pthread_mutex_unlock(&s->lock);
        }
        round_timer_drop(b);
      }
      if (handshake_state(w) != SAMPLE_DONE) {
        account_end(s, b);
        continue;
      }
    }
    /* backed-off idle thread: nothing to do, not even the lock */
    if (!regs && handshake_state(w) == SAMPLE_IDLE && b->gen == s->gen &&
        rounds.round < b->next_look) {
      rounds.st.skipped_idle++;
      continue;
    }
    pthread_mutex_lock(&s->lock);
    w = atomic_load_explicit(&s->handshake, memory_order_acquire);
    b = round_book(i, s);
    if (handshake_state(w) == SAMPLE_DONE) {
      record_answer(s, b, w);
      w = atomic_load_explicit(&s->handshake, memory_order_relaxed);
    }
    int mode;
    if (atomic_load(&s->state) != SLOT_LIVE) {
      /* left: nothing to send */
    } else if (handshake_open(w)) {
      rounds.st.outstanding++;
      uint64_t age = plat_mono_ns() - b->sent_ns;
      if (b->via_timer) {
        if (age > rounds.timer_wait_ns) timer_fallback(i, s, b, w);
      } else if (age > REQUEST_TIMEOUT_NS && withdraw(s, b, w)) {
        rounds.st.timed_out++; /* the signal was lost, or stays blocked: ask again later */
        if (!handler_installed())
          rounds.handler_replaced = 1;
        else
          sig_check(s, b); /* still pending, blocked: no more signals until it takes them */
      }
    } else if (rounds.handler_replaced) {
      /* the sampling signal goes to someone else's handler now: send no more */
    } else if (schedule_decide(i, s, b, &mode)) {
      ask(i, s, b, w, mode);
    }
    /* only a thread waiting for nothing but its next look is skipped */
    rounds.look[i] = atomic_load(&s->state) == SLOT_LIVE &&
                             handshake_state(atomic_load(&s->handshake)) == SAMPLE_IDLE
                         ? b->next_look
                         : 0;
    pthread_mutex_unlock(&s->lock);
  }
  traces_unlock();
}

/* The registered tids at the start of a discovery, sorted (sampler thread only). */
static struct {
  pid_t *tid;
  int n, cap;
} known;

/* Fills `known`; 0, or -ENOMEM (then every thread is looked up in the registry itself). */
static int known_fill(void) {
  for (;;) {
    int n = registry_live_tids(known.tid, known.cap);
    if (n <= known.cap) {
      known.n = n;
      return 0;
    }
    pid_t *p = realloc(known.tid, (size_t)n * 2 * sizeof *p);
    if (!p) return -ENOMEM;
    known.tid = p;
    known.cap = n * 2;
  }
}

/* Registers a thread of the process that nobody registered (the JVM's own: GC, JIT compilers,
 * the VM thread; or a Java thread about to post its ThreadStart, which then completes the
 * registration with its JNIEnv). ctx: non-NULL when `known` holds the registered tids — one
 * binary search a thread, not a scan of the registry (with 1,000 threads the scans were ~20 us
 * of every round). */
static int discover_one(void *ctx, pid_t tid) {
  if (tid == rounds.self) return 0;
  if (ctx ? bsearch(&tid, known.tid, (size_t)known.n, sizeof tid, registry_tid_cmp) != NULL
          : registry_has(tid))
    return 0;
  char name[32];
  if (plat_thread_name(tid, name, sizeof name) != 0) return 0; /* ended meanwhile */
  struct sampler_target t = {.tid = tid, .name = name, .kernel_name = 1};
  int slot = registry_add(&t);
  if (slot >= 0) {
    rounds.st.threads_found++;
    if (rounds.nfresh < (int)(sizeof rounds.fresh / sizeof *rounds.fresh))
      rounds.fresh[rounds.nfresh] = slot;
    rounds.nfresh++; /* more than fit: all names are read again at the next look */
  } else
    rounds.st.threads_refused++; /* the registry is full (or out of memory): not sampled */
  return 0;
}

/* The kernel names of the threads found in /proc/self/task, read again: a thread names itself
 * as it starts (HotSpot's own, a library's pthread_setname_np), and one found before that
 * carries the name it inherited from the thread that made it — a busy host leaves a new thread
 * waiting for a CPU long enough for a look to fall in between. Later samples carry the new
 * name (a thread renamed later too, as perf shows a comm change). ~1.4 us a thread. */
static void name_refresh(int i) {
  struct thread_slot *s = registry_slot(i);
  if (!s || atomic_load(&s->state) != SLOT_LIVE) return;
  pthread_mutex_lock(&s->lock);
  int kernel = atomic_load(&s->state) == SLOT_LIVE && s->kernel_named;
  pid_t tid = s->tid;
  uint32_t gen = s->gen;
  pthread_mutex_unlock(&s->lock);
  char name[32];
  if (kernel && tid != rounds.self && plat_thread_name(tid, name, sizeof name) == 0 &&
      registry_rename_kernel(i, gen, name))
    rounds.st.threads_renamed++;
}

/* At a look: the threads the last look found, or every one that is due (every second, or 1 ms
 * per live thread when there are more than 1,000). */
static void names_refresh(void) {
  int all = rounds.round >= rounds.next_names ||
            rounds.nfresh > (int)(sizeof rounds.fresh / sizeof *rounds.fresh);
  if (all) {
    uint64_t every = (uint64_t)registry_live() * 1000000u;
    if (every < 1000000000u) every = 1000000000u;
    rounds.next_names = rounds.round + every / rounds.cfg.interval_ns;
    for (int i = 0, n = registry_limit(); i < n; i++) name_refresh(i);
  } else {
    for (int k = 0; k < rounds.nfresh; k++) name_refresh(rounds.fresh[k]);
  }
  rounds.nfresh = 0;
}

/* The least number of cached frame keys worth a sweep (housekeeping). */
#define SWEEP_KEYS_MIN 1024

/* After each round, with the round's statistics (traces_lock held: the counters it touches are
 * the report's): threads that ended are dropped; now and then new threads of the JVM are found.
 * Returns 1 when the loaded objects are to be looked at again (objects_refresh, after the lock
 * is let go: it has its own, and compiling a new object's unwind tables — libjvm.so's at the
 * first round, ~13 ms — would hold up a report or a chunk's write meanwhile). */
static int housekeeping(void) {
  for (int k = 0; k < rounds.ngone; k++) {
    registry_remove_slot(rounds.gone[k].slot, rounds.gone[k].gen);
    rounds.st.threads_gone++;
  }
  rounds.ngone = 0;
  if (rounds.round >= rounds.next_trim) {
    /* every minute, the memory malloc holds free goes back to the system (~0.5 ms): tables
     * that were emptied or regrown, names looked up and dropped; glibc keeps it otherwise */
    rounds.next_trim = rounds.round + 60000000000ull / rounds.cfg.interval_ns;
    if (rounds.round) plat_release_free_memory();
  }
  /* the frame keys of unloaded classes' methods go whenever the cache has doubled since the
   * last look (a program that loads classes again and again brings new jmethodIDs for the same
   * methods: the cache would fill with dead ones); a JVMTI call per key, ~1 for each key added */
  size_t keys = traces_keys();
  if (keys < rounds.swept_keys)
    rounds.swept_keys = keys; /* emptied (full) since: count from here */
  if (keys >= SWEEP_KEYS_MIN && keys >= 2 * rounds.swept_keys) {
    record_sweep_keys();
    rounds.swept_keys = traces_keys();
  }
  if (rounds.round < rounds.next_discovery && !rounds.refresh_objects) return 0;
  /* every ~50 ms, or every 0.5 ms per live thread when there are more than 100: reading
   * /proc/self/task costs ~1.4 us a thread here, and with 1,000 threads a read every 50 ms
   * took ~30% of the sampler thread's CPU (Java threads register themselves at ThreadStart;
   * this finds the JVM's own, which seldom come and go) */
  uint64_t every = (uint64_t)registry_live() * 500000u / rounds.cfg.interval_ns;
  if (every < (uint64_t)rounds.discovery_rounds) every = (uint64_t)rounds.discovery_rounds;
  rounds.next_discovery = rounds.round + every;
  names_refresh(); /* before the listing: what it finds is read again at the next look */
  /* the list only when the process has threads the registry has not (all but this one are
   * registered when the counts agree: a thread that ended unnoticed and a new one at once
   * would hide the new one until the end is noticed, a round or a few later; with threads the
   * full registry refused, the counts never agree and every look lists, as before) */
  if (rounds.cfg.jvm_threads && plat_thread_count() != registry_live() + 1) {
    rounds.st.thread_listings++;
    plat_foreach_thread(discover_one, known_fill() == 0 ? &known : NULL);
  }
  rounds.refresh_objects = 0;
  return rounds.cfg.native_frames;
}

/* After the last round, the samples still waiting to catch their thread running are asked
 * for now, wherever the thread is: the CPU they stand for is not dropped (with hundreds of
 * briefly waking threads, ~7% of theirs). */
static void flush_deferred(void) {
  if (rounds.cfg.wall || rounds.cfg.hasrun == SAMPLER_HASRUN_REGS || rounds.handler_replaced)
    return;
  int limit = registry_limit();
  if (limit > rounds.cap) limit = rounds.cap;
  traces_lock();
  rounds.flushing = 1;
  rounds.round_ns = plat_mono_ns();
  for (int i = 0; i < limit; i++) {
    struct thread_slot *s = registry_slot(i);
    struct thread_book *b = &rounds.books[i];
    if (!s) break; /* cannot happen below registry_limit() */
    if (b->gen != s->gen || !b->defer_since) continue;
    pthread_mutex_lock(&s->lock);
    uint32_t w = atomic_load_explicit(&s->handshake, memory_order_acquire);
    int mode;
    if (b->gen == s->gen && b->defer_since && atomic_load(&s->state) == SLOT_LIVE &&
        handshake_state(w) == SAMPLE_IDLE && schedule_decide(i, s, b, &mode))
      ask(i, s, b, w, mode);
    pthread_mutex_unlock(&s->lock);
  }
  rounds.flushing = 0;
  traces_unlock();
}

/* After the last round: records the answers still to come (waiting at most ~20 ms for
 * them); requests never answered keep their units under [sample lost]. */
/* Wall clock, as sampling stops: every live thread is owed the rounds since it was last asked
 * (it was waiting to be looked at again, or answering late), and gets them with the stack it
 * was last seen with — the rounds a thread spends waiting for its next look are otherwise given
 * only at that look, which never comes. traces_lock held; no request is open. */
static void wall_tails(int limit) {
  for (int i = 0; i < limit; i++) {
    struct thread_slot *s = registry_slot(i);
    struct thread_book *b = &rounds.books[i];
    if (!s || b->gen != s->gen || atomic_load(&s->state) != SLOT_LIVE || b->nlast <= 0) continue;
    if (rounds.slots > b->wall_slot) record_again(s, b, rounds.slots - b->wall_slot);
    b->wall_slot = rounds.slots;
  }
}

static void drain(void) {
  flush_deferred();
  uint64_t deadline = plat_mono_ns() + 20000000;
  for (;;) {
    int open = 0, limit = registry_limit();
    if (limit > rounds.cap) limit = rounds.cap; /* slots never looked at have nothing open */
    traces_lock();
    for (int i = 0; i < limit; i++) {
      struct thread_slot *s = registry_slot(i);
      struct thread_book *b = &rounds.books[i];
      if (!s) break; /* cannot happen below registry_limit() */
      pthread_mutex_lock(&s->lock);
      uint32_t w = atomic_load_explicit(&s->handshake, memory_order_acquire);
      if (b->gen == s->gen) {
        if (handshake_state(w) == SAMPLE_DONE) {
          record_answer(s, b, w);
        } else if (b->via_timer && atomic_load(&s->state) != SLOT_LIVE) {
          withdraw_ended(s, b, w);
        } else if (handshake_open(w) && plat_mono_ns() < deadline) {
          open++;
          if (b->via_timer) timer_fallback(i, s, b, w); /* no waiting for a tick */
        } else {
          withdraw(s, b, w);
        }
      }
      int answered = !handshake_open(atomic_load(&s->handshake));
      pthread_mutex_unlock(&s->lock);
      if (answered) account_end(s, b); /* a thread that ended: what it did since our last look */
    }
    if (!open && rounds.cfg.wall) wall_tails(limit);
    traces_unlock();
    if (!open) return;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

/* event=alloc or lock, after the last round: the records still queued are recorded — waiting at most
 * ~20 ms for a producer still writing one (it is inside a JVMTI callback, copying). */
static void drain_alloc(void) {
  uint64_t deadline = plat_mono_ns() + 20000000;
  for (;;) {
    traces_lock();
    rounds.round_ns = plat_mono_ns();
    alloc_drain();
    int more = alloc_pending();
    traces_unlock();
    if (!more || plat_mono_ns() >= deadline) return;
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

/* The time of the round due at `next` (span: its jitter). With CPU-time timers at an interval
 * shorter than 1.5 ticks, rounds and ticks have about the same period: a round that fell just
 * after a tick would arm timers that fire only at the tick after the next round (measured: up to
 * a third of the requests, a quarter fewer captures, as the two drifted into that phase). Such
 * rounds are put mid-way between two ticks instead (CLOCK_MONOTONIC_COARSE says where the ticks
 * fall): a timer armed in one fires half a tick later, half a tick before the next round. */
static uint64_t round_time(uint64_t next, uint64_t span) {
  uint64_t t = rounds.tick_ns, when = next;
  if (rounds.timer_wait_ns && rounds.cfg.interval_ns < t + t / 2) {
    uint64_t last = plat_last_tick_ns();
    if (last && next > last) { /* to the nearest half-way point: at most half a tick away */
      uint64_t phase = (next - last) % t;
      when = phase <= t / 2 ? next + (t / 2 - phase) : next - (phase - t / 2);
    }
  }
  return when - span / 2 + jitter(span); /* the jitter (a sixteenth) stays inside the half tick */
}

/* The sampler thread's CPU since the profile began (rounds.base_cpu; a cut moves it), its clock
 * reading self_cpu now; it goes into the profile. traces_lock held. */
static void measure_self(uint64_t self_cpu) {
  rounds.st.sampler_cpu_ns = self_cpu - rounds.base_cpu;
  record_self(rounds.st.sampler_cpu_ns);
}

/* The process's CPU clock sums the clocks of all its threads (the kernel walks them), so
 * the rounds never read it: a report reads it when it is made, and the end of a run. */
void sthread_measure_process(void) {
  rounds.st.wall_ns = plat_mono_ns() - rounds.base_wall;
  rounds.st.process_cpu_ns = plat_process_cpu_ns() - rounds.base_process;
}

/* The code that exists into the map at a run's start: the events turned on and the stubs
 * replayed first (what is compiled meanwhile is posted), then the compiled methods read from
 * the code cache with their inline records (codemap_add_cache); where the reader cannot (no
 * tables, a heap that does not read), the events' replay of all of it. A first start costs the
 * sampler thread about what the replay did (a warmed-up server, ~2,000 nmethods: 20-31 ms of
 * CPU); a later one reads again only what it does not hold from an earlier one — the same
 * compilation (address, method, compile id) is renewed, not read (codemap_renew_compiled) —
 * 6.6-14.4 ms against 26.1-49.9 ms reading every table (#32, #33, docs/how-it-works.md).
 * With the code cache as the source (`only`), only the stubs' event is turned on:
 * what is compiled from here on is found by the samples and the walks (rounds.from_cache).
 * Returns the events' answer. */
static int code_fill(int only) {
  const struct codecache_layout *l = atomic_load(&rounds.codecache);
  rounds.from_cache = 0;
  if (l) {
    struct codemap_cache_stats cs;
    int rc = rounds.code_fn(rounds.code_ctx, only ? SAMPLER_CODE_GENERATED : SAMPLER_CODE_STUBS);
    if (rc != 0) return rc;
    if (codemap_add_cache(l, &cs) == 0) {
      rounds.st.code_from_cache += cs.added;
      rounds.st.code_kept += cs.kept;
      rounds.st.code_left_out += cs.unnamed + cs.unread;
      rounds.from_cache = only;
      return 0;
    }
    rounds.code_fn(rounds.code_ctx, SAMPLER_CODE_OFF); /* the replay instead */
  }
  return rounds.code_fn(rounds.code_ctx, SAMPLER_CODE_REPLAY);
}

/* DebugNonSafepoints on for a run whose compiled methods come from the code cache (HotSpot
 * records the debug information between safepoints while CompiledMethodLoad is on, or with the
 * flag: without either, a pc interrupted in code compiled during the run gets the scope of the
 * next safepoint, and AsyncGetCallTrace loses the inlined frame it was in), and back off after
 * it (the idle agent pays nothing: a flag set for good cost javac's whole run +6.2% CPU,
 * docs/how-it-works.md). */
static void debug_info(int on) {
  if (!rounds.debug_flag || on == rounds.flag_set) return;
  if (hotspot_flag_set(rounds.debug_flag, on) == 0)
    rounds.flag_set = on;
  else
    rounds.st.debug_flag_failed++;
}

/* The walk of the code cache during a run whose compiled methods come from it: what was
 * compiled since and not met by a sample (an OSR compilation, a caller's) added, and the
 * compiled methods no longer there dropped (what CompiledMethodUnload did). Every
 * CODE_WALK_SOON_NS while the samples keep meeting new code, else every CODE_WALK_LATE_NS. A walk
 * renews what the map holds by compile id and reads the rest: measured 26.6-28.3 ms for
 * `Scenarios jit`'s ~5,000 nmethods; a start that renewed ~2,000 of a server's, 6.6-14.4 ms. */
#define CODE_WALK_SOON_NS 5000000000ull
#define CODE_WALK_LATE_NS 10000000000ull
static void code_walk(uint64_t now) {
  if (!rounds.from_cache || now < rounds.next_code_walk) return;
  uint64_t before = codemap_generation(), t0 = plat_self_cpu_ns();
  struct codemap_cache_stats cs;
  if (codemap_add_cache(&rounds.cache_own, &cs) == 0) {
    int swept = codemap_sweep_compiled(before);
    rounds.st.code_from_cache += cs.added;
    rounds.st.code_kept += cs.kept;
    rounds.st.code_swept += swept > 0 ? (uint64_t)swept : 0;
  }
  rounds.st.code_walks++;
  rounds.st.code_walk_ns += plat_self_cpu_ns() - t0;
  rounds.next_code_walk = now + (rounds.learned_since ? CODE_WALK_SOON_NS : CODE_WALK_LATE_NS);
  rounds.learned_since = 0;
}

/* The stubs replayed again during a run whose compiled methods come from the code cache (no
 * event is on during it: SAMPLER_CODE_GENERATED): a failed walk met generated code the map
 * lacks (record.c stub_unknown). The wait after one doubles from STUB_REPLAY_GAP_NS to
 * STUB_REPLAY_MAX_NS within a run: a program that keeps making stubs its samples meet costs a
 * replay every 10 s at most (one ~2.7 ms of the sampler thread's CPU, perf's count at 20 kHz in
 * `Scenarios mega`: HotSpot listing its stubs, and the map renewing those it holds). */
#define STUB_REPLAY_GAP_NS 100000000ull
#define STUB_REPLAY_MAX_NS 10000000000ull
static void stub_replay(uint64_t now) {
  if (!rounds.stubs_wanted || !rounds.code_on || !rounds.from_cache ||
      now < rounds.next_stub_replay)
    return;
  rounds.stubs_wanted = 0;
  uint64_t gap = rounds.stub_gap ? rounds.stub_gap : STUB_REPLAY_GAP_NS;
  rounds.next_stub_replay = now + gap;
  rounds.stub_gap = gap * 2 < STUB_REPLAY_MAX_NS ? gap * 2 : STUB_REPLAY_MAX_NS;
  uint64_t t0 = plat_self_cpu_ns();
  if (rounds.code_fn(rounds.code_ctx, SAMPLER_CODE_GENERATED) == 0) rounds.st.stub_replays++;
  rounds.st.code_replay_ns += plat_self_cpu_ns() - t0;
}

/* The code map's events follow the runs that signal threads (sampler_jvm.code_events): on
 * before the first round — the code that exists read into the map (code_fill), and what the map
 * kept from an earlier run that this did not renew is code unloaded while nobody listened:
 * dropped — off after the last. An agent that is loaded but not sampling, or sampling
 * allocations or lock waits, has the JIT post nothing: HotSpot hands each compilation's event to
 * its service thread, a wake-up and a pc map per nmethod (bench/results/wholejvm-idle-10ms.md).
 * With the code cache as the source, a sampling run has it post nothing per compilation either. */
static void follow_code(int on) {
  if (!rounds.cfg.codemap || !rounds.code_fn || on == rounds.code_on) return;
  if (on) {
    uint64_t before = codemap_generation(), t0 = plat_self_cpu_ns();
    if (rounds.cache_only) debug_info(1); /* before the walk: what compiles from now on */
    /* a flag that could not be set leaves the events on: they record what it would have */
    rounds.code_on = code_fill(rounds.cache_only && (!rounds.debug_flag || rounds.flag_set)) == 0;
    int swept = rounds.code_on ? codemap_sweep(before) : 0;
    if (!rounds.from_cache) {
      debug_info(0); /* the events' replay: they record it */
    } else {
      codecache_bind(atomic_load(&rounds.codecache), &rounds.cache_own); /* its mask, for the run */
      rounds.next_code_walk = plat_mono_ns() + CODE_WALK_SOON_NS;
      rounds.learned_since = 0;
      rounds.stub_gap = 0; /* the stubs were replayed just now */
      handler_check_code(1);
    }
    rounds.st.code_replays += (uint64_t)rounds.code_on;
    rounds.st.code_swept += swept > 0 ? (uint64_t)swept : 0;
    rounds.st.code_replay_ns += plat_self_cpu_ns() - t0;
  } else {
    rounds.code_fn(rounds.code_ctx, SAMPLER_CODE_OFF);
    rounds.code_on = 0;
    if (rounds.from_cache) handler_check_code(0);
    rounds.from_cache = 0;
    debug_info(0);
  }
}

/* A run's start, on the sampler thread: who it is, the books and the threads' ends forgotten
 * (a new run measures from now), CPU-time timers when they fit the interval, the profile's
 * times based here, and the JVM's callbacks and the handler turned on for what the run records
 * (clock: cpu or wall samples). Returns the run's start (CLOCK_MONOTONIC). */
static uint64_t run_begin(int clock) {
  rounds.self = plat_gettid();
  rounds.self_mask = guard_mask_now(); /* this thread's guards run with it (schedule.c) */
  /* threads and objects are looked for every ~50 ms: a directory read of /proc/self/task
   * (~1 us a thread) and one step of dl_iterate_phdr */
  rounds.discovery_rounds = (int)(50000000 / rounds.cfg.interval_ns);
  if (rounds.discovery_rounds < 1) rounds.discovery_rounds = 1;
  plat_set_timer_slack_ns(1); /* our wake-ups exact: no coalescing with the application's timers */
  jitter_state ^= plat_mono_ns();
  /* a new run measures from now: what threads did while nobody sampled is not theirs to
   * carry (their bookkeeping starts again at first sight) */
  for (int i = 0; i < rounds.cap; i++) rounds.books[i].gen = UINT32_MAX;
  for (int i = 0; i < rounds.cap; i++) rounds.look[i] = 0;
  /* threads that end while this run samples in CPU mode leave their last CPU reading for it
   * (account_end); ends left from before it are not its own */
  for (int i = 0, n = registry_limit(); i < n; i++) atomic_store(&registry_slot(i)->end_cpu, 0);
  registry_keep_ended(clock && !rounds.cfg.wall && rounds.cfg.hasrun != SAMPLER_HASRUN_REGS);
  memset(&rounds.unsampled, 0, sizeof rounds.unsampled);
  rounds.unsampled.phase = round_phase();
  /* busy threads' samples by CPU-time timers, when the interval is at least the tick that
   * fires them (a shorter one would get a sample a tick, not an interval) */
  rounds.tick_ns = plat_tick_ns();
  rounds.timer_wait_ns = rounds.cfg.cpu_timers && !rounds.cfg.wall && clock &&
                                 rounds.cfg.hasrun != SAMPLER_HASRUN_REGS && rounds.tick_ns &&
                                 rounds.cfg.interval_ns >= rounds.tick_ns
                             ? 2 * rounds.tick_ns
                             : 0;
  traces_lock();
  uint64_t start = plat_mono_ns();
  rounds.base_wall = start;
  rounds.round_ns = start;
  round_time_begin(start);
  rounds.base_cpu = plat_self_cpu_ns();
  rounds.base_process = plat_process_cpu_ns();
  rounds.self_cpu_recorded = rounds.self_units_given = 0;
  rounds.next_discovery = 0;
  rounds.next_names = 0;
  rounds.nfresh = 0;
  traces_unlock();
  if (rounds.cfg.lock) /* its queue was made by sampler_configure */
    lock_set_threshold(1, rounds.cfg.lock_threshold_ns);
  if (rounds.cfg.alloc_interval) alloc_set_interval(rounds.cfg.alloc_interval);
  if (clock) handler_set_active(1);
  return start;
}

/* A run's end, on the sampler thread: the queued events recorded (alloc: a run with queued
 * events), the answers still to come collected (clock), everything the run turned on turned
 * off, and its last CPU and times measured. */
static void run_end(int alloc, int clock) {
  if (alloc) {
    alloc_set_interval(0); /* no more records; those queued are recorded now */
    lock_set_threshold(0, 0);
    drain_alloc();
  }
  if (clock) drain();
  follow_code(0);
  for (int i = 0; i < rounds.cap; i++) round_timer_drop(&rounds.books[i]); /* none left armed */
  registry_keep_ended(0);
  plat_thread_running_release(); /* no descriptors kept between runs */
  free(known.tid);
  known.tid = NULL;
  known.n = known.cap = 0;
  handler_set_active(0);
  traces_lock();
  measure_self(plat_self_cpu_ns());
  sthread_measure_process();
  traces_unlock();
}

int sthread_run(void) {
  atomic_store(&rounds.running, 1);
  /* event=alloc or lock: the queue's rounds; signals only with cpu or wall beside them */
  int alloc = sthread_queued(&rounds.cfg), clock = sthread_clock(&rounds.cfg);
  uint64_t start = run_begin(clock);
  uint64_t interval = rounds.cfg.interval_ns, next = start + interval;
  /* Rounds are jittered by +-interval/16 around their absolute deadlines (no drift): a sampler
   * in lock-step with a periodic program would see it always at the same phase. More jitter
   * makes rounds that carry two intervals of CPU, i.e. fewer stacks per CPU-second: measured
   * with Scenarios spin at 1 ms, +-1/4 gave 915 stacks per CPU-second, +-1/16 982, none 990. */
  uint64_t span = interval / 8;
  uint64_t when = round_time(next, span);
  uint64_t c0 = rounds.base_cpu;
  int expired = 0;
  while (!atomic_load(&rounds.stop)) {
    uint64_t now = plat_mono_ns();
    if (now < when) {
      plat_futex_wait((const uint32_t *)&rounds.stop, 0, when - now);
      continue; /* re-check stop and the time */
    }
    if (rounds.cfg.duration_ns && now - start >= rounds.cfg.duration_ns) {
      expired = 1;
      break;
    }
    rounds.round_ns = now;
    if (clock) follow_code(1); /* its replay's CPU counts in this round's */
    if (clock) code_walk(now);
    if (clock) stub_replay(now);
    if (clock) tick();
    traces_lock();
    if (alloc) alloc_drain();
    int refresh = housekeeping();
    /* a round costs from the end of the last one: its wake-up included, and one clock read
     * (a system call) a round instead of two */
    uint64_t c1 = plat_self_cpu_ns();
    rounds.st.ticks++;
    rounds.round++;
    rounds.slots++;
    hist_add(&rounds.tick_cost, c1 - c0);
    c0 = c1;
    measure_self(c1);
    traces_unlock();
    if (refresh) objects_refresh(); /* its CPU counts in the next round's */
    next += interval;
    now = plat_mono_ns();
    if (now >= next) { /* overran: skip the rounds we missed, keep the phase */
      uint64_t missed = (now - next) / interval + 1;
      rounds.st.overruns += missed;
      rounds.slots += missed;
      next += missed * interval;
    }
    when = round_time(next, span);
  }
  run_end(alloc, clock);
  atomic_store(&rounds.running, 0);
  plat_futex_wake((const uint32_t *)&rounds.running, 1);
  return expired;
}

void sthread_stop(void) {
  atomic_store(&rounds.stop, 1);
  plat_futex_wake((const uint32_t *)&rounds.stop, 1);
  uint64_t deadline = plat_mono_ns() + 1000000000ull;
  while (atomic_load(&rounds.running) && plat_mono_ns() < deadline)
    plat_futex_wait((const uint32_t *)&rounds.running, 1, 10000000);
}

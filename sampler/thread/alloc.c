/*
 * alloc.c — the events JVMTI posts on the thread they happen on (allocation samples, lock
 * waits), from that thread to the stack table (see alloc.h).
 *
 * The producer side (alloc_push, lock_push) runs on any Java thread inside a JVMTI callback
 * (or the park wrapper): it copies the record, tagged with its kind, into the queue and counts
 * what the queue refused, never waiting for the sampler thread. The consumer side
 * (alloc_drain) runs on the sampler thread with traces_lock held, like every other writer of
 * the stack table and the time axis; each kind has its leaf's frame kind and its weights.
 */
#include "alloc.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "evq.h"
#include "itab.h"
#include "platform.h"
#include "registry.h"
#include "round.h"
#include "traces.h"
#include "utf8.h"

#define CLASS_MAX 512 /* bytes of a class signature kept (longer ones are cut) */

/* What a record is: its leaf's frame kind and its weights differ. */
enum rec_kind { REC_ALLOC = 0, REC_LOCK = 1 };

/* A queued record; then nframes alloc_frame, the thread's name, the class signature. */
struct alloc_rec {
  uint64_t when; /* plat_mono_ns() in the callback */
  uint64_t size; /* bytes (REC_ALLOC), ns waited (REC_LOCK) */
  int64_t java_id;
  int32_t tid;
  uint16_t name_len, class_len;
  uint32_t nframes, kind;
};

static _Atomic uint64_t interval;                               /* 0: no run takes samples */
static _Atomic uint64_t lost_samples, lost_bytes, lost_objects; /* since the last drain */
static _Atomic uint64_t cost_ns;             /* the callbacks' CPU since the last drain */
static uint64_t rnd = 0x2545f4914f6cdd1dull; /* the drain's rounding (sampler thread) */
/* event=lock: on, its threshold, and its counts since the last drain */
static _Atomic int lock_on;
static _Atomic uint64_t lock_threshold;
static _Atomic uint64_t lock_seen, lock_lost_n, lock_lost_ns, lock_cost;
static _Atomic uint64_t jvmti_walks;       /* waits' stacks taken by JVMTI since the last drain */
static _Atomic uint64_t alloc_jvmti_walks; /* allocation samples' the same */

int alloc_set_interval(uint64_t i) {
  if (i) {
    int rc = evq_init();
    if (rc) return rc;
  }
  atomic_store(&interval, i);
  return 0;
}

double alloc_weight(uint64_t size, uint64_t i, double *objects) {
  if (!size || !i) { /* interval 0 would sample every allocation: each is itself */
    *objects = 1;
    return (double)size;
  }
  double p = -expm1(-(double)size / (double)i);
  *objects = 1 / p;
  return (double)size / p;
}

static int push(int kind, const char *sig, size_t sig_len, uint64_t size,
                const struct alloc_frame *frames, int n);

/* Counts one sample the queue could not take, with its estimated weights. */
static void count_lost(uint64_t size, uint64_t i) {
  double objects, bytes = alloc_weight(size, i, &objects);
  atomic_fetch_add(&lost_samples, 1);
  atomic_fetch_add(&lost_bytes, (uint64_t)llround(bytes));
  atomic_fetch_add(&lost_objects, (uint64_t)llround(objects));
}

uint64_t alloc_cost_begin(int lock) {
  static __thread unsigned turn[2]; /* this thread's callbacks of each kind, counted */
  static __thread int phased;
  static _Atomic unsigned threads;
  if (!phased) { /* a phase of its own: a thread's first callback (its stub made walkable, its
                  * first nmethods decoded: up to milliseconds) is not measured every time and
                  * counted ALLOC_COST_EVERY times, but one time in ALLOC_COST_EVERY */
    unsigned h = (atomic_fetch_add(&threads, 1) + 1) * 2654435761u;
    turn[0] = h >> 16, turn[1] = h >> 8;
    phased = 1;
  }
  if (turn[!!lock]++ % ALLOC_COST_EVERY) return 0;
  return plat_self_cpu_ns() + 1; /* never 0: 0 is "not measured" */
}

/* Adds the CPU the calling thread spent since began (alloc_cost_begin; 0: not measured), for
 * ALLOC_COST_EVERY callbacks, to *sum. */
static void count_cost(_Atomic uint64_t *sum, uint64_t began) {
  if (!began) return;
  uint64_t now = plat_self_cpu_ns() + 1;
  if (now > began) atomic_fetch_add(sum, (now - began) * ALLOC_COST_EVERY);
}

void lock_count_jvmti_walk(void) { atomic_fetch_add(&jvmti_walks, 1); }

void alloc_count_jvmti_walk(void) { atomic_fetch_add(&alloc_jvmti_walks, 1); }

void alloc_take_costs(uint64_t *alloc_ns, uint64_t *lock_ns) {
  *alloc_ns = atomic_exchange(&cost_ns, 0);
  *lock_ns = atomic_exchange(&lock_cost, 0);
}

int alloc_push(const char *sig, size_t sig_len, uint64_t size, const struct alloc_frame *frames,
               int n, uint64_t cost_began) {
  uint64_t i = atomic_load(&interval);
  if (!i) return -EAGAIN;
  int rc = push(REC_ALLOC, sig, sig_len, size, frames, n);
  if (rc) count_lost(size, i);
  count_cost(&cost_ns, cost_began);
  return rc;
}

/* Queues a record of kind, size `size`, at frames[0..n), on the calling thread. Returns 0,
 * -ESRCH or -ENOSPC (the caller counts it lost). */
static int push(int kind, const char *sig, size_t sig_len, uint64_t size,
                const struct alloc_frame *frames, int n) {
  static __thread struct registry_ident me = {.slot = -1}; /* this thread's, read once */
  static __thread pid_t tid; /* its kernel id, asked once (a system call: ~1 µs here) */
  if (!tid) tid = plat_gettid();
  if (registry_identity(tid, &me) != 0) return -ESRCH;
  if (n < 0) n = 0;
  if (sig_len > CLASS_MAX) sig_len = CLASS_MAX;
  size_t name_len = me.len;
  size_t len = sizeof(struct alloc_rec) + (size_t)n * sizeof *frames + name_len + sig_len;
  struct evq_ticket t;
  unsigned char *p = evq_reserve(len, &t);
  if (!p) return -ENOSPC;
  struct alloc_rec r = {.when = plat_mono_ns(),
                        .size = size,
                        .java_id = me.java_id,
                        .tid = (int32_t)tid,
                        .name_len = (uint16_t)name_len,
                        .class_len = (uint16_t)sig_len,
                        .nframes = (uint32_t)n,
                        .kind = (uint32_t)kind};
  memcpy(p, &r, sizeof r);
  p += sizeof r;
  memcpy(p, frames, (size_t)n * sizeof *frames);
  p += (size_t)n * sizeof *frames;
  memcpy(p, me.name, name_len);
  memcpy(p + name_len, sig, sig_len);
  evq_commit(&t);
  return 0;
}

size_t alloc_class_name(const char *sig, size_t n, char *out, size_t len) {
  static const char *const prim[] = {"B", "byte",  "C", "char",    "D", "double",
                                     "F", "float", "I", "int",     "J", "long",
                                     "S", "short", "Z", "boolean", "V", "void"};
  size_t dims = 0, o = 0;
  while (dims < n && sig[dims] == '[') dims++;
  const char *e = sig + dims;
  size_t el = n - dims;
  char tmp[CLASS_MAX * 3 + 64];
  if (el >= 2 && e[0] == 'L' && e[el - 1] == ';') { /* Ljava/lang/String; */
    for (size_t k = 1; k + 1 < el && o + 1 < sizeof tmp; k++) tmp[o++] = e[k] == '/' ? '.' : e[k];
  } else {
    const char *word = NULL;
    for (size_t k = 0; el == 1 && k < sizeof prim / sizeof *prim; k += 2)
      if (e[0] == prim[k][0]) word = prim[k + 1];
    if (word) {
      o = strlen(word);
      memcpy(tmp, word, o);
    } else { /* not a signature: as it is */
      for (size_t k = 0; k < el && o + 1 < sizeof tmp; k++) tmp[o++] = e[k];
    }
  }
  for (size_t d = 0; d < dims && o + 2 < sizeof tmp; d++) tmp[o++] = '[', tmp[o++] = ']';
  int w = utf8_name(tmp, o, out, len);
  return w < 0 ? strlen(out) : (size_t)w;
}

/* A whole number whose expectation is x: floor(x), plus 1 with x's fraction as probability. */
static uint64_t round_unbiased(double x) {
  rnd ^= rnd << 13;
  rnd ^= rnd >> 7;
  rnd ^= rnd << 17;
  double f = floor(x);
  return (uint64_t)f + ((double)(rnd >> 11) * 0x1p-53 < x - f);
}

/* The interned leaf of class sig with its frame kind: "byte[]_[a]" (an allocated class),
 * "java.lang.Object_[l]" (a lock's class); an empty sig (a park without a blocker) is
 * "[park without blocker]". */
static uint32_t class_name_frame(const char *sig, size_t n, const char *suffix) {
  char name[CLASS_MAX * 3 + 24];
  if (!n) return intern_string("[park without blocker]", 22);
  size_t l = alloc_class_name(sig, n, name, sizeof name - 5);
  memcpy(name + l, suffix, 5);
  return intern_string(name, l + 4);
}

/* The leaves made lately, by kind and signature: a program allocates a few classes over and
 * over, and making the name (alloc_class_name, then the interner's cleaning, hash and mutex)
 * was a fifth of the sampler thread's time on an allocation run (perf, crypto at alloc=2m).
 * Direct-mapped by the signature's hash; an interned id stays valid for the life of the process
 * (intern.h). The sampler thread's alone. */
#define CLASS_SEEN 64
#define CLASS_SEEN_SIG 96 /* the longest signature kept here */
static struct {
  uint32_t id;
  uint16_t n;   /* 0: empty (an empty signature is never kept here) */
  char suffix2; /* the suffix's kind letter: 'a' or 'l' */
  char sig[CLASS_SEEN_SIG];
} class_seen[CLASS_SEEN];

static uint32_t class_frame(const char *sig, size_t n, const char *suffix) {
  if (!n || n > CLASS_SEEN_SIG) return class_name_frame(sig, n, suffix);
  unsigned i =
      (unsigned)(itab_hash_bytes(sig, n) ^ (uint64_t)(unsigned char)suffix[2]) % CLASS_SEEN;
  if (class_seen[i].n == n && class_seen[i].suffix2 == suffix[2] &&
      memcmp(class_seen[i].sig, sig, n) == 0)
    return class_seen[i].id;
  uint32_t id = class_name_frame(sig, n, suffix);
  if (id != TRACES_NO_ID) { /* a refusal (the interner full) is asked again next time */
    class_seen[i].id = id;
    class_seen[i].n = (uint16_t)n;
    class_seen[i].suffix2 = suffix[2];
    memcpy(class_seen[i].sig, sig, n);
  }
  return id;
}

/* Records one queued record (evq_drain's callback). */
static void record_one(void *ctx, const void *rec, size_t len) {
  (void)ctx;
  struct alloc_rec r;
  if (len < sizeof r) return;
  memcpy(&r, rec, sizeof r);
  const unsigned char *p = (const unsigned char *)rec + sizeof r;
  static struct thread_slot who; /* the thread as the record names it (it may have ended) */
  who.tid = r.tid;
  who.java_id = r.java_id;
  size_t nl = r.name_len < sizeof who.name ? r.name_len : sizeof who.name - 1;
  memcpy(who.name, p + (size_t)r.nframes * sizeof(struct alloc_frame), nl);
  who.name[nl] = '\0';
  const char *sig = (const char *)p + (size_t)r.nframes * sizeof(struct alloc_frame) + r.name_len;
  int n = record_begin_stack(&who);
  int depth = (int)r.nframes < rounds.cfg.depth ? (int)r.nframes : rounds.cfg.depth;
  for (int k = depth - 1; k >= 0; k--) {
    struct alloc_frame f;
    memcpy(&f, p + (size_t)k * sizeof f, sizeof f);
    rounds.fbuf[n++] = record_method_frame(f.method, (jint)f.bci);
  }
  if (r.kind == REC_LOCK) {
    rounds.fbuf[n++] = class_frame(sig, r.class_len, "_[l]");
    double waits, ns = lock_weight(r.size, rounds.cfg.lock_threshold_ns, &waits);
    uint64_t t = (uint64_t)llround(ns), w = round_unbiased(waits);
    record_store(&who, n, SAMPLER_EVENT_LOCK, w, t, r.when);
    rounds.st.lock_samples++;
    rounds.st.lock_ns += t;
    return;
  }
  rounds.fbuf[n++] = class_frame(sig, r.class_len, "_[a]");
  double objects, bytes = alloc_weight(r.size, rounds.cfg.alloc_interval, &objects);
  uint64_t b = (uint64_t)llround(bytes), o = round_unbiased(objects);
  record_store(&who, n, SAMPLER_EVENT_ALLOC, o, b, r.when);
  rounds.st.alloc_samples++;
  rounds.st.alloc_bytes += b;
  rounds.st.alloc_objects += o;
}

void alloc_drain(void) {
  evq_drain(record_one, NULL);
  uint64_t alloc_ns, lock_ns;
  alloc_take_costs(&alloc_ns, &lock_ns);
  rounds.st.alloc_cost_ns += alloc_ns;
  rounds.st.lock_cost_ns += lock_ns;
  rounds.st.lock_walks_jvmti += atomic_exchange(&jvmti_walks, 0);
  rounds.st.alloc_walks_jvmti += atomic_exchange(&alloc_jvmti_walks, 0);
  rounds.st.lock_waits += atomic_exchange(&lock_seen, 0);
  uint64_t ln = atomic_exchange(&lock_lost_n, 0);
  if (ln) {
    uint64_t lt = atomic_exchange(&lock_lost_ns, 0);
    rounds.fbuf[0] = rounds.id_lost;
    record_store(NULL, 1, SAMPLER_EVENT_LOCK, ln, lt, rounds.round_ns);
    rounds.st.lock_lost += ln;
    rounds.st.lock_lost_ns += lt;
  }
  uint64_t ls = atomic_exchange(&lost_samples, 0);
  if (!ls) return;
  uint64_t lb = atomic_exchange(&lost_bytes, 0), lo = atomic_exchange(&lost_objects, 0);
  rounds.fbuf[0] = rounds.id_lost;
  record_store(NULL, 1, SAMPLER_EVENT_ALLOC, lo, lb, rounds.round_ns);
  rounds.st.alloc_lost += ls;
  rounds.st.alloc_lost_bytes += lb;
}

int alloc_pending(void) { return evq_pending(); }

/* ---- event=lock ---- */

int lock_set_threshold(int on, uint64_t threshold_ns) {
  if (on) {
    int rc = evq_init();
    if (rc) return rc;
  }
  atomic_store(&lock_threshold, threshold_ns);
  atomic_store(&lock_on, on);
  return 0;
}

double lock_weight(uint64_t wait_ns, uint64_t threshold_ns, double *waits) {
  if (wait_ns >= threshold_ns) {
    *waits = 1;
    return (double)wait_ns;
  }
  /* recorded with probability d/T: it stands for T/d waits and T ns (E = d) */
  *waits = (double)threshold_ns / (double)(wait_ns ? wait_ns : 1);
  return (double)threshold_ns;
}

int lock_take(uint64_t wait_ns) {
  if (!atomic_load_explicit(&lock_on, memory_order_relaxed)) return 0;
  atomic_fetch_add_explicit(&lock_seen, 1, memory_order_relaxed);
  uint64_t t = atomic_load_explicit(&lock_threshold, memory_order_relaxed);
  if (wait_ns >= t) return 1;
  static __thread uint64_t x; /* this thread's random numbers (xorshift64) */
  if (!x) x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)plat_gettid() << 17) ^ plat_mono_ns();
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return (x >> 11) % t < wait_ns; /* probability d/T (its bias: T / 2^53, none to speak of) */
}

int lock_push(const char *sig, size_t sig_len, uint64_t wait_ns, const struct alloc_frame *frames,
              int n, uint64_t cost_began) {
  if (!atomic_load(&lock_on)) return -EAGAIN;
  int rc = push(REC_LOCK, sig, sig_len, wait_ns, frames, n);
  if (rc) {
    double waits, ns = lock_weight(wait_ns, atomic_load(&lock_threshold), &waits);
    atomic_fetch_add(&lock_lost_n, 1);
    atomic_fetch_add(&lock_lost_ns, (uint64_t)llround(ns));
  }
  count_cost(&lock_cost, cost_began);
  return rc;
}

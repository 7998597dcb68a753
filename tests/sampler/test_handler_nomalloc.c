/*
 * The signal handler's path never allocates: this test binary interposes malloc, calloc,
 * realloc and free (glibc lets an executable replace them) and counts the calls made on the
 * sampled thread while its handler answers thousands of requests — captures that walk, walks
 * that fail and are recovered through the code map, walks that fail in code only the code
 * cache knows (a fake one: fake_codecache.h), and requests that find nothing moved.
 * The native stack walk (libunwind through the project's accessors) is on, so its path is
 * covered too; and the requests are delivered both ways the sampler delivers them: its own
 * queued signal, and the thread's CPU-time timer (si_code SI_TIMER). The sampled thread itself
 * allocates nothing once it is registered, so any count is the handler's. (Not in the sanitizer build: ASan owns malloc there.)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "codecache.h"
#include "codemap.h"
#include "fake_codecache.h"
#include "fake_jvm.h"
#include "guard.h"
#include "handler.h"
#include "native.h"
#include "objects.h"
#include "platform.h"
#include "registry.h"
#include "sample.h"
#include "sample_walk.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static _Atomic pid_t watched;
static atomic_ulong allocations;

static void note(void) {
  if (atomic_load_explicit(&watched, memory_order_relaxed) == plat_gettid())
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  note();
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void free(void *p) {
  if (p) note();
  __libc_free(p);
}

#define SIG (SIGRTMIN + 4)
static atomic_int stop;
static atomic_int slot = -1;
static unsigned long native_frames;    /* frames the native walk found, all requests */
static unsigned long by_timer;         /* requests the CPU-time timer delivered */
static unsigned long from_cache;       /* failed walks the handler found in the code cache */
static struct fake_codecache new_code; /* with `in_new_code`, the worker runs in its nmethod */
static int in_new_code;
static volatile unsigned char stop_new_code;

static void spin_here(void) {
  while (!atomic_load(&stop)) __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg) {
  fake_jvm_set_role((jmethodID)arg);
  struct sampler_target t = {.tid = plat_gettid(), .name = "watched", .env = fake_jvm_env()};
  plat_self_stack(&t.stack_lo, &t.stack_hi);
  atomic_store(&slot, registry_add(&t));
  atomic_store(&watched, t.tid); /* from here on this thread allocates nothing itself */
  if (in_new_code)
    fake_codecache_run(&new_code, &stop_new_code);
  else
    spin_here();
  return NULL;
}

/* Samples a worker with role `role` `n` times in each mode, each request delivered by a signal
 * or (timer) by a CPU-time timer on the worker; returns the allocations seen. */
static unsigned long sample_worker(jmethodID role, int n, int timer) {
  atomic_store(&stop, 0);
  stop_new_code = 0;
  atomic_store(&slot, -1);
  atomic_store(&allocations, 0);
  pthread_t th;
  pthread_create(&th, NULL, worker, (void *)role);
  while (atomic_load(&watched) == 0 || atomic_load(&slot) < 0) usleep(1000);
  struct thread_slot *s = registry_slot(atomic_load(&slot));
  int tm = -1;
  if (timer && plat_cpu_timer_create(s->tid, SIG, atomic_load(&slot), &tm) != 0) n = 0;
  for (int k = 0; k < n; k++) {
    uint32_t w = atomic_load(&s->handshake);
    s->mode = k % 2 ? SAMPLE_CAPTURE : SAMPLE_IF_MOVED;
    atomic_store(&s->handshake, handshake_word(handshake_seq(w) + 1, SAMPLE_PENDING));
    if ((timer ? plat_cpu_timer_arm(tm, 1) : plat_signal_thread(s->tid, SIG, atomic_load(&slot))) !=
        0)
      break;
    uint64_t give_up = plat_mono_ns() + 2000000000ull; /* unanswered: the test fails, no hang */
    while (handshake_state(atomic_load(&s->handshake)) != SAMPLE_DONE && plat_mono_ns() < give_up)
      sched_yield();
    if (handshake_state(atomic_load(&s->handshake)) != SAMPLE_DONE) break;
    if (s->record->walked) native_frames += (unsigned long)s->record->nnative;
    by_timer += s->record->by_timer;
    from_cache += s->record->walked && s->record->walk->hit.kind == CODEMAP_NMETHOD;
    atomic_store(&s->handshake,
                 handshake_word(handshake_seq(atomic_load(&s->handshake)), SAMPLE_IDLE));
  }
  if (tm >= 0) plat_cpu_timer_delete(tm);
  atomic_store(&stop, 1);
  stop_new_code = 1;
  pthread_join(th, NULL);
  atomic_store(&watched, 0);
  return atomic_load(&allocations);
}

int main(void) {
  if (registry_init(64) || codemap_init() || objects_init(1) || native_init() || guard_install() ||
      fake_codecache_make(&new_code, (jmethodID)0x5000, 7))
    return 2;
  struct sampler_jvm jvm = fake_jvm();
  if (handler_install(SIG, jvm.asgct, 64)) return 2;
  handler_set_native(1);
  handler_set_active(1);
  unsigned long walked = sample_worker(FAKE_ROLE_BUSY, 2000, 0); /* native frames up to main */
  /* the same path, delivered by the worker's CPU-time timer (one a scheduler tick: fewer) */
  unsigned long timed = sample_worker(FAKE_ROLE_BUSY, 200, 1);
  /* then the worker's loop lies in a "stub": failed walks are recovered through the code map */
  codemap_add_stub("StubRoutines::spin", (const void *)((uintptr_t)spin_here & ~(uintptr_t)4095),
                   8192, 0);
  unsigned long recovered = sample_worker(NULL, 2000, 0);
  /* and in an nmethod the map has not heard of: the handler reads it from the code cache */
  new_code.layout.read = guard_read, new_code.layout.mask = guard_mask_now;
  handler_set_codecache(&new_code.layout);
  in_new_code = 1;
  unsigned long cached = sample_worker(NULL, 500, 0);
  unsigned long acks = (unsigned long)atomic_load(&handler_counters()->acks);
  int ok = walked == 0 && timed == 0 && recovered == 0 && cached == 0 && acks == 4700 &&
           by_timer == 200 && native_frames > 0 && from_cache > 0;
  printf("handler answered %lu requests, %lu of them by the CPU-time timer (native frames walked: "
         "%lu; failed walks found in the code cache: %lu); allocations on the sampled thread: %lu "
         "while walking, %lu by the timer, %lu while recovering failed walks, %lu while reading "
         "the code cache\n",
         acks, by_timer, native_frames, from_cache, walked, timed, recovered, cached);
  printf("%d passed, %d failed\n", ok, !ok);
  return ok ? 0 : 1;
}

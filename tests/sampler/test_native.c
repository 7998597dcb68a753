/*
 * Tests of the native stack walk (sampler/native/native_walk_sig.c) on its own: a thread runs a C
 * call chain java_like -> native_outer -> native_inner; a signal handler installed here walks
 * it from the interrupted context. With a copy of java_like's code in anonymous memory and in
 * the code map (as code the JVM generated is), the walk gives native_inner, native_outer and
 * stops there (Java follows); without it, it goes on through java_like to the thread's start.
 * Frames are named by the symbols module, as the sampler thread names them. Every walk is also
 * done by libunwind alone, and the two must agree.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codemap.h"
#include "native.h"
#include "objects.h"
#include "platform.h"
#include "symbols.h"

#define NOINLINE __attribute__((noinline))

static atomic_int stop, ready;
static _Atomic pid_t worker_tid;
static uintptr_t stack_lo, stack_hi;

NOINLINE void native_inner(void) {
  atomic_store(&ready, 1);
  while (!atomic_load(&stop)) __asm__ volatile("" ::: "memory");
}

NOINLINE void native_outer(void) {
  native_inner();
  __asm__ volatile("" ::: "memory"); /* no tail call: native_outer keeps its frame */
}

typedef void (*java_like_fn)(void (*callee)(void));

/* Page-aligned in a section of its own, and calling through a pointer (no pc-relative
 * reference): its code still works when copied to a page of anonymous memory. */
__attribute__((noinline, section(".text.java_like"), aligned(4096))) void
java_like(void (*callee)(void)) {
  callee();
  __asm__ volatile("" ::: "memory");
}

static java_like_fn java_copy; /* java_like's page, copied to anonymous memory; or NULL */

static void *worker(void *arg) {
  (void)arg;
  plat_self_stack(&stack_lo, &stack_hi);
  atomic_store(&worker_tid, plat_gettid());
  if (java_copy)
    java_copy(native_outer);
  else
    java_like(native_outer);
  return NULL;
}

/* Copies java_like's page to anonymous executable memory, where the JVM's code lives (in no
 * loaded object), and puts the copy in the code map. */
static void copy_java_like(void) {
  void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(page, MAP_FAILED);
  memcpy(page, (const void *)(uintptr_t)java_like, 4096);
  cr_assert_eq(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
  java_copy = (java_like_fn)(uintptr_t)page;
  cr_assert_eq(codemap_add_stub("java_like", page, 4096, 0), 0);
}

static uintptr_t pcs[64], gpcs[64];
static atomic_int npcs = -1;
static int stop_reason, ngeneral;
static struct native_end end, gend;
static struct native_memo memo; /* the worker's, as the handler keeps one per thread */

/* Walks the interrupted thread twice: as the handler does, and by libunwind alone. */
static void on_signal(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si;
  unsigned t = objects_enter();
  int n = native_walk(uc, stack_lo, stack_hi, pcs, 64, &memo, &end);
  ngeneral = native_walk_general(uc, stack_lo, stack_hi, gpcs, 64, &gend);
  objects_exit(t);
  atomic_store(&npcs, n);
}

/* Walks the worker once; returns the frame count. */
static int walk_worker(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR2, &sa, NULL);
  atomic_store(&npcs, -1);
  cr_assert_eq(plat_signal_thread(atomic_load(&worker_tid), SIGUSR2, 0), 0);
  for (int i = 0; atomic_load(&npcs) < 0; i++) {
    cr_assert_lt(i, 2000, "no walk within 2 s");
    usleep(1000);
  }
  native_end_resolve(&end); /* as the sampler thread does */
  native_end_resolve(&gend);
  stop_reason = end.stop;
  return atomic_load(&npcs);
}

static const char *name_of(int i, char *buf, size_t len) {
  symbols_name(i ? pcs[i] - 1 : pcs[i], buf, len); /* a return address names its call */
  return buf;
}

static pthread_t start(int java_code) {
  cr_assert_eq(objects_init(1), 0);
  cr_assert_eq(native_init(), 0);
  cr_assert_eq(codemap_init(), 0);
  if (java_code) copy_java_like();
  pthread_t th;
  pthread_create(&th, NULL, worker, NULL);
  while (!atomic_load(&ready)) usleep(1000);
  return th;
}

static void finish(pthread_t th) {
  atomic_store(&stop, 1);
  pthread_join(th, NULL);
}

Test(native, the_walk_stops_where_the_jvms_code_begins) {
  pthread_t th = start(1);
  int n = walk_worker();
  char a[128], b[128];
  cr_expect_eq(n, 2, "native_inner and native_outer, then Java code (%d frames)", n);
  cr_expect_eq(stop_reason, NATIVE_STOP_JAVA, "stopped at the JVM's code (%s)",
               native_stop_name(stop_reason));
  if (n >= 2) {
    cr_expect_str_eq(name_of(0, a, sizeof a), "native_inner");
    cr_expect_str_eq(name_of(1, b, sizeof b), "native_outer");
  }
  finish(th);
}

Test(native, without_java_code_the_walk_reaches_the_threads_start) {
  pthread_t th = start(0);
  int n = walk_worker();
  char buf[128];
  cr_expect_geq(n, 4, "native_inner, native_outer, java_like, worker, ...: %d frames", n);
  cr_expect_eq(stop_reason, NATIVE_STOP_END, "reached the thread's first frame (%s)",
               native_stop_name(stop_reason));
  const char *want[] = {"native_inner", "native_outer", "java_like", "worker"};
  for (int i = 0; i < 4 && i < n; i++)
    cr_expect_str_eq(name_of(i, buf, sizeof buf), want[i], "frame %d", i);
  int libc = 0;
  for (int i = 4; i < n; i++)
    if (!strcmp(name_of(i, buf, sizeof buf), "start_thread") || !strcmp(buf, "clone3") ||
        !strcmp(buf, "clone"))
      libc++;
  cr_expect_gt(libc, 0, "libc's thread start frames are walked too");
  finish(th);
}

Test(native, a_walk_limited_to_the_page_of_sp_is_a_prefix_of_the_whole) {
  pthread_t th = start(0);
  int whole = walk_worker();
  uintptr_t all[64];
  memcpy(all, pcs, sizeof all);
  uintptr_t lo = stack_lo, hi = stack_hi;
  stack_lo = stack_hi = 0; /* unknown: only the page of sp may be read */
  int n = walk_worker();
  stack_lo = lo, stack_hi = hi;
  cr_expect_geq(n, 1, "the leaf is known without reading the stack");
  cr_expect_leq(n, whole);
  /* the leaf pc moves within the spinning loop between the two walks; its function does not,
   * and the return addresses are the same */
  char a[128], b[128];
  symbols_name(pcs[0], a, sizeof a);
  symbols_name(all[0], b, sizeof b);
  cr_expect_str_eq(a, b, "the leaf is in the same function");
  for (int i = 1; i < n && i < whole; i++)
    cr_expect_eq(pcs[i], all[i], "frame %d is the whole walk's", i);
  cr_expect(stop_reason == NATIVE_STOP_BAD_READ || stop_reason == NATIVE_STOP_END, "%d frames, %s",
            n, native_stop_name(stop_reason));
  finish(th);
}

/* ---- the compiled tables against libunwind, on code that keeps moving ---- */

static int by_value(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

NOINLINE int mixed_leaf(int *v, int n, char *buf, size_t len) {
  qsort(v, (size_t)n, sizeof *v, by_value); /* libc calling back into this code */
  char word[40];
  snprintf(word, sizeof word, "%.32s", buf + 32);
  int k = snprintf(buf, len, "%d %d %s", v[0], v[n - 1], word);
  memmove(buf + 1, buf, len / 2);
  return k;
}

NOINLINE int mixed_recursion(int depth, int *v, int n, char *buf, size_t len) {
  volatile char pad[64]; /* frames of another size than the leaf's */
  pad[depth % 64] = (char)depth;
  if (depth == 0) return mixed_leaf(v, n, buf, len) + pad[0];
  return mixed_recursion(depth - 1, v, n, buf, len) + pad[depth % 64];
}

static void *mixed_worker(void *arg) {
  (void)arg;
  plat_self_stack(&stack_lo, &stack_hi);
  atomic_store(&worker_tid, plat_gettid());
  int v[256];
  char buf[512] = {0};
  unsigned seed = 1;
  atomic_store(&ready, 1);
  while (!atomic_load(&stop)) {
    for (int i = 0; i < 256; i++) v[i] = (int)rand_r(&seed);
    mixed_recursion((int)(seed % 7), v, 256, buf, sizeof buf);
  }
  return NULL;
}

Test(native, the_compiled_tables_give_libunwinds_frames) {
  cr_assert_eq(objects_init(1), 0);
  cr_assert_eq(native_init(), 0);
  cr_assert_eq(codemap_init(), 0);
  pthread_t th;
  pthread_create(&th, NULL, mixed_worker, NULL);
  while (!atomic_load(&ready)) usleep(1000);
  int fast = 0, walks = 300;
  for (int w = 0; w < walks; w++) {
    int n = walk_worker();
    if (end.general) continue; /* libunwind walked it: the same walk twice */
    fast++;
    cr_expect_eq(n, ngeneral, "walk %d: %d frames, libunwind %d", w, n, ngeneral);
    cr_expect_eq(end.stop, gend.stop, "walk %d: ended %s, libunwind %s", w,
                 native_stop_name(end.stop), native_stop_name(gend.stop));
    for (int i = 0; i < n && i < ngeneral; i++)
      cr_expect_eq(pcs[i], gpcs[i], "walk %d, frame %d", w, i);
    usleep((unsigned)(w % 5) * 100);
  }
  cr_expect_geq(fast * 10, walks * 9, "the compiled tables walked %d of %d", fast, walks);
  atomic_store(&stop, 1);
  pthread_join(th, NULL);
}

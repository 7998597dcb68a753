/*
 * codecheck.c — a test-only JVMTI agent (never shipped): proves the code-cache reader
 * (sampler/java/codecache.h) against the JVM's own events. For every nmethod CompiledMethodLoad
 * reports, pcs at its start, middle and last byte are looked up through the reader, which must
 * give an nmethod with the same code range and jmethodID; every DynamicCodeGenerated region's
 * first pc must be found as a blob that is not an nmethod; the agent's own code must not be
 * found. For each pc of the event's inline records (JVMTI_CMLR_INLINE_INFO), the chain
 * codecache_scopes reads from the nmethod's own debug information must be the record's (the
 * same jmethodIDs and bcis in the same order), there and one byte before (a pc no PcDesc names,
 * after the previous record's: the next PcDesc's chain, as HotSpot finds it); and
 * codecache_each_scope over the nmethod's whole PcDesc table must give the record's pcs and
 * chains one for one. At VM death, GenerateEvents replays CompiledMethodLoad for every live
 * nmethod, and the walk over the code cache (codecache_each_nmethod) must find the replayed ones
 * with their jmethodIDs, and those the events reported and did not unload. It prints `codecheck:`
 * lines with the counts, the misses (up to 20 of each kind, 10 of the walk's), the compile levels
 * seen, how the reader read (reads=guarded: plain loads under the fault guard from VM init on,
 * the default; reads=syscall: process_vm_readv, the agent's option) and the reader's times;
 * jvm_codecache (run.py) checks them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <jvmti.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecache.h"
#include "guard.h"

static struct codecache_layout layout;
/* how the reader reads: 1 plain loads under the fault guard (from VM init on, once HotSpot's own
 * fault handler is there to chain to), 0 process_vm_readv throughout (option reads=syscall) */
static int guarded;
static long early_lookups; /* reads=guarded: lookups before VM init, by process_vm_readv */
/* the layout bound to the thread of the event being checked (codecache_bind, at each event, lock
 * held): the reader's times below leave out the guard's two system calls, timed here */
static struct codecache_layout bound;
static long binds, bind_ns;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long nmethods, agree, stubs, stubs_found, outside, outside_found, lookups, lookup_ns;
static long levels[6];
static int misses_shown;
/* the inline chains: records compared, agreeing, frames in them, the deepest, time decoding */
static long chains, chains_agree, chain_frames, chain_deepest, chain_ns, chain_misses_shown;
static long between_chains, between_agree; /* of those, at a pc just before a record's */
static const char *scopes_why; /* the reader's "not available: ..." for the scopes, or NULL */
/* codecache_each_scope against an nmethod's whole inline record: nmethods compared, agreeing */
static long tables, tables_agree, table_misses_shown, table_pcs, table_ns;

#define MAX_CHAIN 64

/* The nmethods the events report, by code address: live until CompiledMethodUnload. */
struct reported {
  uintptr_t code;
  void *method;
  int live, walked;
};
static struct reported *reported;
static long n_reported, cap_reported;
static long walked, walked_unreported, walked_other_id, walk_skipped, walk_ns;
/* At VM death GenerateEvents replays CompiledMethodLoad for every live nmethod: that set (whose
 * events the JVM has all posted, unlike those of nmethods still queued behind the program's) is
 * compared with the walk as well. */
static int dying;          /* from VM death on, only the replay's events (on its thread) count */
static pthread_t replayer; /* the thread in VMDeath, whose GenerateEvents replays */
static struct reported *replayed;
static long n_replayed, cap_replayed, walked_unreplayed, late;

static void *sym(const char *name, void *ctx) {
  (void)ctx;
  return dlsym(RTLD_DEFAULT, name);
}

static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Binds the reader to the calling thread; lock held. */
static void bind(void) {
  long t = now_ns();
  codecache_bind(&layout, &bound);
  bind_ns += now_ns() - t;
  binds++;
}

/* One timed lookup; lock held. */
static int find(uintptr_t pc, struct codecache_blob *b) {
  if (guarded && !layout.read) { /* before VM init: not timed, the guard is not there yet */
    early_lookups++;
    return codecache_find(&bound, pc, b);
  }
  long t = now_ns();
  int rc = codecache_find(&bound, pc, b);
  lookup_ns += now_ns() - t;
  lookups++;
  return rc;
}

static void miss(const char *what, uintptr_t pc, int rc, const struct codecache_blob *b,
                 uintptr_t begin, uintptr_t end, const void *id) {
  if (misses_shown++ >= 20) return;
  fprintf(
      stderr,
      "codecheck: miss %s pc=%#lx rc=%d nmethod=%d code=[%#lx,%#lx) id=%p; want [%#lx,%#lx) id=%p\n",
      what, (unsigned long)pc, rc, b->is_nmethod, (unsigned long)b->code_begin,
      (unsigned long)b->code_end, b->jmethod_id, (unsigned long)begin, (unsigned long)end, id);
}

/* Whether got[0, n) is the record's chain. */
static int same_chain(const struct codecache_frame *got, int n, const PCStackInfo *want) {
  int ok = want && n == want->numstackframes;
  for (int i = 0; ok && i < n; i++)
    ok = got[i].jmethod_id == (void *)want->methods[i] &&
         got[i].bci == (want->bcis ? want->bcis[i] : -1);
  return ok;
}

/* The chain the reader gives at pc, timed, against the record's; lock held. pc is the record's,
 * or one byte before it (`between`: a pc no PcDesc names, whose next PcDesc is the record's). */
static void check_chain(const struct codecache_blob *b, uintptr_t pc, const PCStackInfo *want,
                        int between) {
  struct codecache_frame got[MAX_CHAIN];
  long t = now_ns();
  int n = codecache_scopes(&bound, b, pc, got, MAX_CHAIN);
  chain_ns += now_ns() - t;
  chains++;
  between_chains += between;
  if (same_chain(got, n, want)) {
    chains_agree++;
    between_agree += between;
    chain_frames += n;
    if (n > chain_deepest) chain_deepest = n;
    return;
  }
  if (chain_misses_shown++ >= 20) return;
  char line[512];
  int at = snprintf(line, sizeof line, "codecheck: chain miss pc=%#lx (+%ld%s) rc=%d got",
                    (unsigned long)pc, (long)(pc - b->code_begin), between ? ", between" : "", n);
  for (int i = 0; i < n && at < (int)sizeof line - 40; i++)
    at += snprintf(line + at, sizeof line - (size_t)at, " %p@%d", got[i].jmethod_id, got[i].bci);
  at += snprintf(line + at, sizeof line - (size_t)at, "; want");
  for (int i = 0; i < want->numstackframes && at < (int)sizeof line - 40; i++)
    at += snprintf(line + at, sizeof line - (size_t)at, " %p@%d", (void *)want->methods[i],
                   want->bcis ? want->bcis[i] : -1);
  fprintf(stderr, "%s\n", line);
}

/* codecache_each_scope's visit: the record's next pc and chain must be this one. */
struct cursor {
  const jvmtiCompiledMethodLoadInlineRecord *ir;
  jint next;
  int bad;
};
static int next_record(uintptr_t pc, const struct codecache_frame *chain, int n, void *ctx) {
  struct cursor *c = ctx;
  const PCStackInfo *want = c->next < c->ir->numpcs ? &c->ir->pcinfo[c->next] : NULL;
  c->next++;
  c->bad += !want || (uintptr_t)want->pc != pc || !same_chain(chain, n, want);
  return 0;
}

/* The nmethod's whole table through codecache_each_scope against its (first) inline record. */
static void check_table(const struct codecache_blob *b, const void *info) {
  const jvmtiCompiledMethodLoadRecordHeader *h = info;
  while (h && h->kind != JVMTI_CMLR_INLINE_INFO) h = h->next;
  if (!h) return;
  struct cursor c = {(const void *)h, 0, 0};
  long t = now_ns();
  int rc = codecache_each_scope(&bound, b, next_record, &c);
  table_ns += now_ns() - t;
  tables++;
  table_pcs += c.next;
  if (rc == c.ir->numpcs && c.next == c.ir->numpcs && !c.bad) {
    tables_agree++;
    return;
  }
  if (table_misses_shown++ < 20)
    fprintf(stderr, "codecheck: table miss code=%#lx rc=%d visited=%d differing=%d; want %d\n",
            (unsigned long)b->code_begin, rc, (int)c.next, c.bad, (int)c.ir->numpcs);
}

/* Every pc of the event's inline records (at most 64 headers, as the code map reads them). */
static void check_chains(const struct codecache_blob *b, const void *info) {
  int headers = 0;
  for (const jvmtiCompiledMethodLoadRecordHeader *h = info; h && headers < 64;
       h = h->next, headers++) {
    const jvmtiCompiledMethodLoadInlineRecord *ir = (const void *)h;
    if (h->kind != JVMTI_CMLR_INLINE_INFO || !ir->pcinfo) continue;
    for (jint i = 0; i < ir->numpcs; i++) {
      uintptr_t pc = (uintptr_t)ir->pcinfo[i].pc,
                prev = i ? (uintptr_t)ir->pcinfo[i - 1].pc : b->code_begin;
      check_chain(b, pc, &ir->pcinfo[i], 0);
      if (pc - 1 > prev) check_chain(b, pc - 1, &ir->pcinfo[i], 1);
    }
  }
}

/* Adds an nmethod to a list (reported or replayed); lock held. */
static void remember(struct reported **list, long *n, long *cap, uintptr_t code, void *method) {
  if (*n == *cap) {
    long c = *cap ? 2 * *cap : 4096;
    struct reported *r = realloc(*list, sizeof *r * (size_t)c);
    if (!r) return; /* counted as not reported: the comparison shows it */
    *list = r, *cap = c;
  }
  (*list)[(*n)++] = (struct reported){code, method, 1, 0};
}

static int by_code(const void *a, const void *b) {
  uintptr_t x = ((const struct reported *)a)->code, y = ((const struct reported *)b)->code;
  return x < y ? -1 : x > y;
}

/* The live entry of list[0, n) (sorted by code) at code, or NULL. */
static struct reported *live_at(struct reported *list, long n, uintptr_t code) {
  const struct reported key = {code, NULL, 0, 0}, *end = list + n;
  struct reported *r = n ? bsearch(&key, list, (size_t)n, sizeof key, by_code) : NULL;
  if (!r) return NULL;
  while (r > list && r[-1].code == code) r--; /* the live one among equal addresses (reused) */
  while (r < end && r->code == code && !r->live) r++;
  return r < end && r->code == code ? r : NULL;
}

/* codecache_each_nmethod's visit: the reported live nmethod and the replayed one at the same
 * code address. */
static int visit(const struct codecache_blob *b, void *ctx) {
  (void)ctx;
  walked++;
  struct reported *r = live_at(reported, n_reported, b->code_begin),
                  *p = live_at(replayed, n_replayed, b->code_begin);
  if (!p && walked_unreplayed++ < 10)
    fprintf(stderr, "codecheck: walk found %#lx id=%p level=%d, not replayed\n",
            (unsigned long)b->code_begin, b->jmethod_id, b->comp_level);
  if (p) {
    p->walked = 1;
    if (p->method != b->jmethod_id) walked_other_id++;
  }
  if (!r) {
    walked_unreported++;
    return 0;
  }
  r->walked = 1;
  return 0;
}

static void JNICALL on_unload(jvmtiEnv *jvmti, jmethodID method, const void *code) {
  (void)jvmti;
  pthread_mutex_lock(&lock);
  for (long i = n_reported - 1; i >= 0; i--) /* the newest with that address */
    if (reported[i].code == (uintptr_t)code && reported[i].method == (void *)method &&
        reported[i].live) {
      reported[i].live = 0;
      break;
    }
  pthread_mutex_unlock(&lock);
}

static void JNICALL on_load(jvmtiEnv *jvmti, jmethodID method, jint size, const void *addr,
                            jint map_length, const jvmtiAddrLocationMap *map, const void *info) {
  (void)jvmti, (void)map_length, (void)map;
  uintptr_t begin = (uintptr_t)addr, end = begin + (uintptr_t)size;
  const uintptr_t pcs[] = {begin, begin + (uintptr_t)size / 2, end - 1};
  pthread_mutex_lock(&lock);
  if (dying) { /* the replay, or an event of the queue the Service Thread still posts: late */
    if (pthread_equal(pthread_self(), replayer))
      remember(&replayed, &n_replayed, &cap_replayed, begin, method);
    else
      late++;
    pthread_mutex_unlock(&lock);
    return;
  }
  bind();
  nmethods++;
  remember(&reported, &n_reported, &cap_reported, begin, method);
  int ok = size > 0;
  struct codecache_blob b = {0};
  for (size_t i = 0; ok && i < sizeof pcs / sizeof pcs[0]; i++) {
    memset(&b, 0, sizeof b);
    int rc = find(pcs[i], &b);
    if (rc != 0 || !b.is_nmethod || b.code_begin != begin || b.code_end != end ||
        b.jmethod_id != (void *)method) {
      miss("nmethod", pcs[i], rc, &b, begin, end, method);
      ok = 0;
    }
  }
  if (ok) {
    agree++;
    levels[b.comp_level >= 0 && b.comp_level <= 4 ? b.comp_level : 5]++;
    if (!scopes_why) check_chains(&b, info), check_table(&b, info);
  }
  pthread_mutex_unlock(&lock);
}

static void JNICALL on_stub(jvmtiEnv *jvmti, const char *name, const void *addr, jint length) {
  (void)jvmti;
  struct codecache_blob b = {0};
  pthread_mutex_lock(&lock);
  stubs++;
  bind();
  int rc = find((uintptr_t)addr, &b);
  if (rc == 0 && !b.is_nmethod && b.code_begin <= (uintptr_t)addr &&
      (uintptr_t)addr + (uintptr_t)length <= b.code_end)
    stubs_found++;
  else
    miss(name, (uintptr_t)addr, rc, &b, (uintptr_t)addr, (uintptr_t)addr + (uintptr_t)length, NULL);
  /* code that is not in the code cache: this agent's own, and a stack address */
  int here = 0;
  const uintptr_t away[] = {(uintptr_t)&on_stub, (uintptr_t)&here};
  for (size_t i = 0; i < 2; i++) {
    outside++;
    if (find(away[i], &b) != -ENOENT) outside_found++;
  }
  pthread_mutex_unlock(&lock);
}

/* How many of list[0, n) are live, and walked; up to 10 of the others shown. */
static void tally(const char *what, const struct reported *list, long n, long *live, long *hit) {
  int shown = 0;
  *live = *hit = 0;
  for (long i = 0; i < n; i++) {
    *live += list[i].live;
    *hit += list[i].live && list[i].walked;
    if (list[i].live && !list[i].walked && shown++ < 10)
      fprintf(stderr, "codecheck: walk miss %#lx id=%p (%s, not walked)\n",
              (unsigned long)list[i].code, list[i].method, what);
  }
}

/* The fault guard in front of HotSpot's handler (installed by now), and the reader on it. */
static void JNICALL on_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread) {
  (void)jvmti, (void)jni, (void)thread;
  if (!guarded) return;
  int rc = guard_install();
  if (rc != 0) {
    fprintf(stderr, "codecheck: guard_install: %s\n", strerror(-rc));
    return;
  }
  pthread_mutex_lock(&lock);
  layout.read = guard_read;
  layout.mask = guard_mask_now;
  pthread_mutex_unlock(&lock);
}

static void JNICALL on_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  (void)jni;
  /* every live nmethod once more, then the walk over the code cache against both sets */
  pthread_mutex_lock(&lock);
  dying = 1;
  replayer = pthread_self();
  pthread_mutex_unlock(&lock);
  jvmtiError replay = (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
  pthread_mutex_lock(&lock);
  qsort(reported, (size_t)n_reported, sizeof *reported, by_code);
  qsort(replayed, (size_t)n_replayed, sizeof *replayed, by_code);
  bind();
  long t = now_ns();
  int rc = codecache_each_nmethod(&bound, visit, NULL, &walk_skipped);
  walk_ns = now_ns() - t;
  long live, live_walked, rlive, replayed_walked;
  tally("reported", reported, n_reported, &live, &live_walked);
  tally("replayed", replayed, n_replayed, &rlive, &replayed_walked);
  fprintf(stderr,
          "codecheck: walk rc=%d walked=%ld walk_skipped=%ld walk_us=%ld replay=%d replayed=%ld "
          "replayed_walked=%ld walked_unreplayed=%ld walked_other_id=%ld live=%ld "
          "live_walked=%ld walked_unreported=%ld late=%ld\n",
          rc, walked, walk_skipped, walk_ns / 1000, (int)replay, n_replayed, replayed_walked,
          walked_unreplayed, walked_other_id, live, live_walked, walked_unreported, late);
  fprintf(
      stderr,
      "codecheck: reads=%s guard_faults=%lu early_lookups=%ld ns_per_bind=%ld nmethods=%ld agree=%ld stubs=%ld stubs_found=%ld outside=%ld "
      "outside_found=%ld levels=%ld,%ld,%ld,%ld,%ld,%ld lookups=%ld ns_per_lookup=%ld "
      "chains=%ld chains_agree=%ld chain_frames=%ld chain_deepest=%ld ns_per_chain=%ld "
      "tables=%ld tables_agree=%ld table_pcs=%ld ns_per_table=%ld between=%ld "
      "between_agree=%ld\n",
      layout.read ? "guarded" : "syscall", (unsigned long)guard_faults(), early_lookups,
      binds ? bind_ns / binds : 0, nmethods, agree, stubs, stubs_found, outside, outside_found,
      levels[0], levels[1], levels[2], levels[3], levels[4], levels[5], lookups,
      lookups ? lookup_ns / lookups : 0, chains, chains_agree, chain_frames, chain_deepest,
      chains ? chain_ns / chains : 0, tables, tables_agree, table_pcs,
      tables ? table_ns / tables : 0, between_chains, between_agree);
  pthread_mutex_unlock(&lock);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  (void)reserved;
  if (!options || !*options || strcmp(options, "reads=guarded") == 0) {
    guarded = 1;
  } else if (strcmp(options, "reads=syscall") != 0) {
    fprintf(stderr,
            "codecheck: unknown option '%s': accepted reads=guarded (the default) or "
            "reads=syscall\n",
            options);
    return JNI_ERR;
  }
  const char *why = NULL;
  if (codecache_init(sym, NULL, &layout, &why) != 0) {
    fprintf(stderr, "codecheck: %s\n", why);
    return JNI_ERR;
  }
  scopes_why = layout.scopes_why;
  if (scopes_why) fprintf(stderr, "codecheck: scopes %s\n", scopes_why);
  jvmtiEnv *jvmti;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  jvmtiCapabilities caps = {0};
  caps.can_generate_compiled_method_load_events = 1;
  jvmtiEventCallbacks cb = {0};
  cb.CompiledMethodLoad = on_load;
  cb.CompiledMethodUnload = on_unload;
  cb.DynamicCodeGenerated = on_stub;
  cb.VMInit = on_init;
  cb.VMDeath = on_death;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE)
    return JNI_ERR;
  const jvmtiEvent events[] = {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                               JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_VM_INIT,
                               JVMTI_EVENT_VM_DEATH};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
    if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) !=
        JVMTI_ERROR_NONE)
      return JNI_ERR;
  return JNI_OK;
}

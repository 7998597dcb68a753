/*
 * sampler.c — the front door (see sampler.h): set-up, the registration of threads and code,
 * HotSpot's layout for the anchor walk, and the report. The sampler thread's rounds are in
 * thread/run.c; the signal handler in signal/handler_sig.c.
 */
#include "sampler.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "codecache.h"
#include "codemap.h"
#include "diskcache.h"
#include "evq.h"
#include "guard.h"
#include "handler.h"
#include "hotspot.h"
#include "intern.h"
#include "marks.h"
#include "native.h"
#include "objects.h"
#include "platform.h"
#include "registry.h"
#include "sthread.h"
#include "stubwalk.h"
#include "timeline.h"
#include "traces.h"

static struct {
  struct hotspot_layout hotspot;     /* read at init */
  const char *hotspot_missing;       /* why the layout could not be read, or NULL */
  const char *anchor_walk_off;       /* NULL once the anchor walk is set up */
  int env_known;                     /* hotspot.env is valid (sampler_setup_anchor_walk) */
  struct codecache_layout codecache; /* the code cache's reader (stubwalk: blobs by pc) */
  int codecache_ok;                  /* codecache is valid */
  const char *code_source;           /* the report's */
  char code_why[160];                /* code_source's words when they are made here */
} jvm_layout = {.anchor_walk_off = "not set up"};

/* Where the code map gets the compiled methods a run meets, when they are compiled during it:
 * from the code cache itself — no event per compilation (#33) — when this JVM's tables describe
 * the records, Method::_code (how the sampler thread finds a walked frame's nmethod) and
 * DebugNonSafepoints (the flag that makes HotSpot record the inlined frames between safepoints,
 * as the events did: set for each run that samples, back after it); else from
 * CompiledMethodLoad, and the report says why. Sets the report's code_source. */
static void choose_code_source(const struct sampler_jvm *jvm, const char *cache_why) {
  const struct codecache_layout *l = &jvm_layout.codecache;
  uintptr_t flag = 0;
  const char *why = cache_why            ? cache_why
                    : l->scopes_why      ? l->scopes_why
                    : l->method_code < 0 ? "not available: Method::_code"
                                         : NULL;
  int asked = !why; /* the flag's answer is the last word */
  int rc = why ? -ENOENT
               : hotspot_flag_find(jvm->symbol, jvm->symbol_ctx, "DebugNonSafepoints", &flag, &why);
  if (rc >= 0) {
    sthread_set_code_source(rc == 0 ? flag : 0);
    jvm_layout.code_source = rc == 0 ? "the code cache (DebugNonSafepoints set while a run samples)"
                                     : "the code cache (DebugNonSafepoints on already)";
    return;
  }
  snprintf(jvm_layout.code_why, sizeof jvm_layout.code_why, "CompiledMethodLoad (%s%s)",
           asked ? "DebugNonSafepoints: " : "", why);
  jvm_layout.code_source = jvm_layout.code_why;
}

/* The report's words on the disk cache: its directory, or "off" and why — a line of the text
 * report, so a path's control characters are made '?' (utf8_name). */
static char cache_words[4400] = "off";

int sampler_set_cache(const char *dir, char *why, size_t len) {
  char err[4300] = "", words[4310];
  int rc = diskcache_open(dir, err, sizeof err);
  if (rc) {
    snprintf(words, sizeof words, "off (%s)", err);
    if (why) snprintf(why, len, "%s", err);
  } else {
    snprintf(words, sizeof words, "%s", dir ? dir : "off");
  }
  utf8_name(words, strlen(words), cache_words, sizeof cache_words);
  return rc;
}

/* Tests only: the set-up step of sampler_init that fails (1: the first that runs, in its order),
 * as if it had run out of memory, without running; 0: none (tests/sampler/test_sampler_init.c
 * makes each fail in turn and checks that nothing is left behind). */
int sampler_init_fail_step;

/* 1 when the next set-up step is the one to fail (sampler_init_fail_step). */
static int injected(int *step) { return ++*step == sampler_init_fail_step; }

/* One set-up step after another, and one cleanup path that undoes them in reverse order: a
 * failure at any step leaves nothing behind (memory, tables, signal handlers). */
int sampler_init(const struct sampler_config *c, const struct sampler_jvm *jvm) {
  if (!c->interval_ns || c->depth <= 0 || !jvm->asgct || !jvm->method_name) return -EINVAL;
  int step = 0, events = c->alloc_interval || c->lock;
  int err = injected(&step) ? -ENOMEM : registry_init(c->depth); /* sets the depth: no undo */
  if (err) return err;
  err = injected(&step) ? -ENOMEM : traces_init();
  if (err) return err; /* the registry's depth: nothing to undo */
  err = injected(&step) ? -ENOMEM : sthread_init(c, jvm);
  if (err) goto fail_sthread;
  if (c->codemap) {
    err = injected(&step) ? -ENOMEM : codemap_init();
    if (err) goto fail_codemap;
  }
  /* the unwind tables are compiled by the sampler thread's first round, not here: the JVM's
   * start does not wait for them */
  if (c->native_frames) {
    err = injected(&step) ? -ENOMEM : objects_init(0);
    if (err) goto fail_objects;
    err = injected(&step) ? -ENOMEM : native_init();
    if (err) goto fail_native;
  }
  if (events) {
    err = injected(&step) ? -ENOMEM : evq_init(); /* the JVMTI events' queue */
    if (err) goto fail_evq;
  }
  timeline_set_limit(c->time_bytes ? c->time_bytes : TIMELINE_MAX_BYTES);
  /* without the layout, sampling goes on; the report says why VM code is not walked */
  const char *why = "this JVM's symbols were not given";
  if (jvm->symbol &&
      hotspot_read_layout(jvm->symbol, jvm->symbol_ctx, &jvm_layout.hotspot, &why) == 0)
    why = NULL;
  jvm_layout.hotspot_missing = why;
  jvm_layout.codecache_ok =
      !why && codecache_init(jvm->symbol, jvm->symbol_ctx, &jvm_layout.codecache, &why) == 0;
  if (c->codemap) choose_code_source(jvm, jvm_layout.codecache_ok ? NULL : why);
  /* HotSpot's fault entry, asked first about faults inside AsyncGetCallTrace (guard.h): its
   * SafeFetch probes fault there on purpose */
  guard_set_vm_handler(jvm->symbol ? (guard_vm_handler_fn)(uintptr_t)jvm->symbol(
                                         "JVM_handle_linux_signal", jvm->symbol_ctx)
                                   : NULL);
  /* before the handler: no sample is ever taken unguarded */
  err = injected(&step) ? -ENOMEM : guard_install();
  if (err) goto fail_guard;
  /* the code cache read by plain copies under the guard (codecache.h) */
  jvm_layout.codecache.read = guard_read;
  jvm_layout.codecache.mask = guard_mask_now;
  err = injected(&step) ? -ENOMEM : handler_install(c->sig, jvm->asgct, c->depth);
  if (err) goto fail_handler;
  handler_set_native(c->native_frames);
  /* a run's start reads the compiled methods from the code cache, not the events' replay, when
   * this JVM's tables describe their records too */
  if (jvm_layout.codecache_ok && !jvm_layout.codecache.scopes_why) {
    sthread_set_codecache(&jvm_layout.codecache);
    /* and a failed walk in code compiled since the map last heard is found there too */
    if (c->codemap) handler_set_codecache(&jvm_layout.codecache);
  }
  return 0;
  /* a step that fails leaves nothing of its own; from its label on, the steps before it are
   * undone, last first */
fail_handler:
  guard_uninstall();
fail_guard:
  guard_set_vm_handler(NULL);
  if (events) evq_fini();
fail_evq:
  if (c->native_frames) native_fini();
fail_native:
  if (c->native_frames) objects_fini();
fail_objects:
  if (c->codemap) codemap_fini();
fail_codemap:
  sthread_fini();
fail_sthread:
  intern_fini(); /* the names sthread_init interned (nothing else has any yet) */
  traces_fini();
  return err;
}

int sampler_configure(const struct sampler_config *c) {
  int err = sthread_check_config(c);
  if (err) return err;
  /* native frames turned on: the objects now, their unwind tables at the first round */
  if (c->native_frames && !sthread_config()->native_frames) {
    err = objects_init(0);
    if (!err) err = native_init();
    if (err) return err;
  }
  if (c->alloc_interval || c->lock) {
    err = evq_init(); /* the JVMTI events' queue, made once */
    if (err) return err;
  }
  sthread_set_config(c);
  traces_lock(); /* the time axis's limit is read by the sampler thread under it */
  timeline_set_limit(c->time_bytes ? c->time_bytes : TIMELINE_MAX_BYTES);
  traces_unlock();
  handler_set_native(c->native_frames);
  return 0;
}

void sampler_fini(void) {
  handler_set_active(0);
  handler_uninstall();
  guard_uninstall();
}

int sampler_run(void) { return sthread_run(); }

void sampler_stop(void) { sthread_stop(); }

/* ---- threads ---- */

int sampler_thread_started(const struct sampler_target *t) {
  int rc = registry_add(t);
  return rc < 0 ? rc : 0;
}

void *sampler_thread_ended(pid_t tid, uint64_t end_cpu_ns) {
  return registry_remove(tid, end_cpu_ns);
}

void sampler_forget_threads(void (*release)(void *ctx, void *handle), void *ctx) {
  pid_t tids[256];
  for (;;) {
    int n = registry_live_tids(tids, (int)(sizeof tids / sizeof *tids));
    if (n <= 0) return;
    if (n > (int)(sizeof tids / sizeof *tids)) n = (int)(sizeof tids / sizeof *tids);
    for (int i = 0; i < n; i++) {
      void *h = registry_remove(tids[i], 0);
      if (h) release(ctx, h);
    }
  }
}

int sampler_setup_anchor_walk(JNIEnv *self_env, uintptr_t self_java_thread, pid_t self_tid) {
  const char *why = jvm_layout.hotspot_missing;
  int rc = -ENOENT;
  if (!why)
    rc = hotspot_find_env(&jvm_layout.hotspot, self_env, self_java_thread, (int)self_tid, &why);
  if (!rc) {
    jvm_layout.env_known = 1;
    sthread_set_hotspot(&jvm_layout.hotspot); /* the schedule's word on thread states */
  }
  if (!rc && !sthread_config()->codemap) {
    why = "codemap=off: the return address is checked against the map";
    rc = -ENOENT;
  }
  if (!rc) handler_set_hotspot(&jvm_layout.hotspot);
  jvm_layout.anchor_walk_off = rc ? why : NULL;
  return rc;
}

int sampler_java_thread_ids(uintptr_t java_thread, pid_t *tid, JNIEnv **env) {
  if (!jvm_layout.env_known) return -EINVAL;
  void *e = NULL;
  int rc = hotspot_thread_ids(&jvm_layout.hotspot, java_thread, tid, &e);
  if (!rc) *env = e;
  return rc;
}

/* ---- code ---- */

/* CompiledMethodLoad events taken (the report's code_posted): a cumulative count, as the
 * handler's are, the report's the difference since the last cut */
static _Atomic uint64_t methods_posted;

void sampler_method_loaded(jmethodID m, const void *code, jint size, const void *compile_info) {
  atomic_fetch_add_explicit(&methods_posted, 1, memory_order_relaxed);
  if (sthread_config()->codemap) codemap_add_method(m, code, size, compile_info);
}

void sampler_method_unloaded(jmethodID m, const void *code) {
  if (sthread_config()->codemap) codemap_remove_method(m, code);
}

void sampler_code_generated(const char *name, const void *code, jint size) {
  if (!sthread_config()->codemap) return;
  if (codemap_renew_stub(name, code, size) == 0) return; /* a replay: the map has it */
  /* a runtime stub's frame size lets the handler walk past it (hotspot.h) */
  int frame_words = jvm_layout.hotspot_missing || size <= 0
                        ? 0
                        : hotspot_blob_frame_words(&jvm_layout.hotspot, code, (size_t)size);
  codemap_add_stub(name, code, size, frame_words);
}

/* ---- what was recorded ---- */

/* Cumulative counters of other modules, as they were when the profile began: its report counts
 * from there. */
static struct {
  uint64_t acks, stray, foreign, wrong_tid, anchor_refused, code_stale, code_posted, faults,
      vm_handled, guard_full, native_cut, names_refused, stubs_walkable;
  int registered;
} since;

/* Fills *r. traces_lock held. */
static void report_locked(struct sampler_report *r) {
  memset(r, 0, sizeof *r);
  sthread_report(r); /* its counters, costs and handler_replaced */
  struct traces_refusals tr;
  traces_refused(&tr);
  r->n.stacks_refused = tr.stacks;
  r->n.keys_refused = tr.keys;
  r->n.names_refused = intern_refused() - since.names_refused;
  r->stacks = traces_count();
  const struct sampler_config *cfg = sthread_config();
  r->events =
      (sthread_clock(cfg) ? 1u << (cfg->wall ? SAMPLER_EVENT_WALL : SAMPLER_EVENT_CPU) : 0) |
      (cfg->alloc_interval ? 1u << SAMPLER_EVENT_ALLOC : 0) |
      (cfg->lock ? 1u << SAMPLER_EVENT_LOCK : 0);
  r->names = intern_count();
  r->keys = traces_keys();
  r->code_entries = codemap_count();
  r->table_bytes = traces_bytes() + intern_bytes();
  struct timeline_info ti;
  timeline_get_info(&ti);
  r->time_cell_ns = ti.cell_ns;
  r->time_coarsened = ti.coarsenings;
  r->time_entries = ti.entries;
  r->time_bytes = ti.bytes;
  for (int i = 1; i <= ASGCT_NCODES; i++) r->asgct_failed += r->n.asgct[i];
  r->recovered = r->n.recovered_stub + r->n.recovered_anchor + r->n.attributed_code +
                 r->n.recovered_same_call + r->n.recovered_native;
  r->failed_kept = r->asgct_failed - r->recovered - r->n.named_stub;
  r->threads_registered = registry_registered() - since.registered;
  r->threads_live = registry_live();
  const struct handler_counters *h = handler_counters();
  r->handler_acks = atomic_load(&h->acks) - since.acks;
  r->handler_stray = atomic_load(&h->stray) - since.stray;
  r->handler_foreign = atomic_load(&h->foreign) - since.foreign;
  r->handler_wrong_tid = atomic_load(&h->wrong_tid) - since.wrong_tid;
  r->anchor_refused = atomic_load(&h->anchor_refused) - since.anchor_refused;
  r->code_stale = atomic_load(&h->code_stale) - since.code_stale;
  r->code_posted = atomic_load(&methods_posted) - since.code_posted;
  r->anchor_walk_off = jvm_layout.anchor_walk_off;
  r->code_source = jvm_layout.code_source;
  r->faults = guard_faults() - since.faults;
  r->guard_full = guard_full() - since.guard_full;
  r->vm_handled = guard_vm_handled() - since.vm_handled;
  r->native_cut = native_walks_cut() - since.native_cut;
  struct diskcache_stats tables, syms;
  diskcache_stats(DISKCACHE_CFI, &tables);
  diskcache_stats(DISKCACHE_SYMBOLS, &syms);
  r->disk_cache = cache_words;
  r->tables_read = tables.read;
  r->tables_written = tables.written;
  r->symbols_read = syms.read;
  r->symbols_written = syms.written;
  r->cache_refused = tables.refused + syms.refused;
  r->cache_failed = tables.failed + syms.failed;
  r->n.stubs_walkable = stubwalk_changed() - since.stubs_walkable;
  r->own_cpu_ns = r->n.sampler_cpu_ns + r->n.handler_ns + r->n.alloc_cost_ns + r->n.lock_cost_ns;
  uint64_t process = r->n.process_cpu_ns;
  if (process && sthread_config()->hasrun != SAMPLER_HASRUN_REGS) {
    r->coverage_permille = (int)(r->n.cpu_ns * 1000 / process);
    r->lost_permille =
        (int)((r->n.lost_cpu_ns + r->n.unwalked_cpu_ns + r->n.sig_blocked_cpu_ns) * 1000 / process);
    r->sampler_permille = (int)(r->n.sampler_cpu_ns * 1000 / process);
    int rest = 1000 - r->coverage_permille; /* the sampler thread's CPU is in the profile too */
    r->unseen_permille = rest > 0 ? rest : 0;
  }
}

void sampler_report(struct sampler_report *r) {
  traces_lock();
  if (sthread_running()) sthread_measure_process();
  report_locked(r);
  traces_unlock();
}

/* Starts the next profile from zero: no stacks, counters and histograms at 0, the times
 * measured from now on (the threads' bookkeeping goes on: CPU they used since their last
 * sample is carried into the new profile). Names and the key cache stay. traces_lock held. */
static void clear_locked(void) {
  traces_clear();
  sthread_clear();
  const struct handler_counters *h = handler_counters();
  since.acks = atomic_load(&h->acks);
  since.stray = atomic_load(&h->stray);
  since.foreign = atomic_load(&h->foreign);
  since.wrong_tid = atomic_load(&h->wrong_tid);
  since.anchor_refused = atomic_load(&h->anchor_refused);
  since.code_stale = atomic_load(&h->code_stale);
  since.code_posted = atomic_load(&methods_posted);
  since.faults = guard_faults();
  since.guard_full = guard_full();
  since.vm_handled = guard_vm_handled();
  since.native_cut = native_walks_cut();
  since.stubs_walkable = stubwalk_changed();
  since.names_refused = intern_refused();
  since.registered = registry_registered() - registry_live(); /* the live ones count again */
}

void sampler_clear(void) {
  traces_lock();
  clear_locked();
  traces_unlock();
}

struct copy_ctx {
  struct sampler_snapshot *s;
  size_t nframes;
  int err;
};

static int snapshot_add(struct copy_ctx *c, const uint32_t *frames, int n, int kind,
                        uint64_t samples, uint64_t units, uint64_t cpu_ns) {
  struct sampler_snapshot *s = c->s;
  if (c->err) return c->err;
  if (s->n == s->cap_stacks) {
    size_t cap = s->cap_stacks ? s->cap_stacks * 2 : 256;
    struct sampler_stack *p = realloc(s->stacks, cap * sizeof *p);
    if (!p) return c->err = -ENOMEM;
    s->stacks = p;
    s->cap_stacks = cap;
  }
  if (c->nframes + (size_t)n > s->cap_frames) {
    size_t cap = s->cap_frames ? s->cap_frames * 2 : 4096;
    while (cap < c->nframes + (size_t)n) cap *= 2;
    uint32_t *p = realloc(s->frames, cap * sizeof *p);
    if (!p) return c->err = -ENOMEM;
    s->frames = p;
    s->cap_frames = cap;
  }
  memcpy(s->frames + c->nframes, frames, (size_t)n * sizeof *frames);
  /* frames is an offset until the copy is complete (the pool may still move) */
  s->stacks[s->n++] = (struct sampler_stack){
      (const uint32_t *)(uintptr_t)c->nframes, n, samples, units, cpu_ns, kind};
  c->nframes += (size_t)n;
  return 0;
}

static void copy_stack(void *vctx, const struct trace_view *t) {
  snapshot_add(vctx, t->frames, t->n, t->kind, t->samples, t->units, t->cpu_ns);
}

/* The stack of the time entries an id STHREAD_NOT_KEPT(kind) names: not_kept[kind], the index of
 * the stack that stands for the captures of that kind the stack table could not take. */
static uint32_t time_stack(uint32_t stack, const uint32_t *not_kept) {
  if (stack == TIMELINE_NO_STACK) return not_kept[0];
  for (int k = 0; k < SAMPLER_EVENTS; k++)
    if (stack == STHREAD_NOT_KEPT(k)) return not_kept[k];
  return stack;
}

/* Copies the time axis into s->time; not_kept[kind]: the index of the stack that stands for
 * the captures of that kind the stack table could not take. 0 or -ENOMEM. traces_lock held. */
static int copy_time(struct sampler_snapshot *s, const uint32_t *not_kept) {
  struct sampler_time *t = &s->time;
  struct timeline_info ti;
  timeline_get_info(&ti);
  t->start_wall_ns = ti.start_wall_ns;
  uint64_t now = plat_mono_ns();
  t->duration_ns = now > ti.start_ns ? now - ti.start_ns : 0;
  t->cell_ns = ti.cell_ns;
  size_t n = ti.entries, nt, name_bytes = 0;
  const struct timeline_thread *th = timeline_threads(&nt);
  for (size_t i = 0; i < nt; i++) name_bytes += strlen(th[i].name) + 1;
  struct timeline_entry *e = malloc((n ? n : 1) * sizeof *e);
  t->entries = malloc((n ? n : 1) * sizeof *t->entries);
  t->threads = malloc((nt ? nt : 1) * sizeof *t->threads);
  t->names = malloc(name_bytes ? name_bytes : 1);
  if (!e || !t->entries || !t->threads || !t->names) {
    free(e);
    return -ENOMEM;
  }
  timeline_read(e);
  size_t nm = marks_count(ti.start_ns); /* (one added meanwhile is after this moment) */
  struct mark *mk = malloc((nm ? nm : 1) * sizeof *mk);
  t->marks = malloc((nm ? nm : 1) * sizeof *t->marks);
  if (!mk || !t->marks) {
    free(e);
    free(mk);
    return -ENOMEM;
  }
  t->nmarks = marks_copy(ti.start_ns, mk, nm, &t->marks_lost);
  for (size_t i = 0; i < t->nmarks; i++) {
    uint64_t a = mk[i].start_ns > ti.start_ns ? mk[i].start_ns - ti.start_ns : 0;
    uint64_t b = mk[i].end_ns > ti.start_ns ? mk[i].end_ns - ti.start_ns : 0;
    t->marks[i] = (struct sampler_time_mark){a, b - a, mk[i].kind};
  }
  free(mk);
  for (size_t i = 0; i < n; i++)
    t->entries[i] = (struct sampler_time_entry){e[i].cell,   time_stack(e[i].stack, not_kept),
                                                e[i].thread, e[i].samples,
                                                e[i].units,  e[i].cpu_ns};
  free(e);
  char *p = t->names;
  for (size_t i = 0; i < nt; i++) {
    size_t len = strlen(th[i].name) + 1;
    memcpy(p, th[i].name, len);
    t->threads[i] = (struct sampler_time_thread){th[i].tid, th[i].java_id, p};
    p += len;
  }
  t->n = n;
  t->nthreads = nt;
  return 0;
}

int sampler_mark(int kind, uint64_t start_mono_ns, uint64_t end_mono_ns) {
  return marks_add(kind, start_mono_ns, end_mono_ns);
}

const char *sampler_mark_name(int kind) {
  static const char *const what[] = {[SAMPLER_MARK_GC] = "GC pause",
                                     [SAMPLER_MARK_KILL3] = "profile written: kill -3",
                                     [SAMPLER_MARK_DUMP] = "profile written: dump"};
  return kind > 0 && kind <= SAMPLER_MARK_DUMP ? what[kind] : NULL;
}

int sampler_snapshot(struct sampler_snapshot *s, int cut) {
  memset(s, 0, sizeof *s);
  struct copy_ctx c = {s, 0, 0};
  traces_lock();
  if (sthread_running()) sthread_measure_process();
  report_locked(&s->report);
  traces_foreach(copy_stack, &c);
  /* the captures the stack table could not take: a stack per kind, after the others */
  uint32_t not_kept[SAMPLER_EVENTS], frame[SAMPLER_EVENTS];
  uint64_t samples[SAMPLER_EVENTS], units[SAMPLER_EVENTS], cpu_ns[SAMPLER_EVENTS];
  for (int k = 0, next = (int)s->n; k < SAMPLER_EVENTS; k++) {
    frame[k] = sthread_not_kept(k, &samples[k], &units[k], &cpu_ns[k]);
    not_kept[k] = (uint32_t)next;
    next += samples[k] != 0;
  }
  if (!c.err) c.err = copy_time(s, not_kept);
  for (int k = 0; k < SAMPLER_EVENTS; k++)
    if (samples[k]) snapshot_add(&c, &frame[k], 1, k, samples[k], units[k], cpu_ns[k]);
  if (!c.err && cut) clear_locked();
  traces_unlock();
  if (c.err) {
    sampler_snapshot_free(s);
    return c.err;
  }
  for (size_t i = 0; i < s->n; i++)
    s->stacks[i].frames = s->frames + (uintptr_t)s->stacks[i].frames;
  return 0;
}

void sampler_snapshot_foreach(const struct sampler_snapshot *s,
                              void (*fn)(void *ctx, const struct sampler_stack *st), void *ctx) {
  for (size_t i = 0; i < s->n; i++) fn(ctx, &s->stacks[i]);
}

void sampler_snapshot_free(struct sampler_snapshot *s) {
  free(s->stacks);
  free(s->frames);
  free(s->time.entries);
  free(s->time.threads);
  free(s->time.names);
  free(s->time.marks);
  memset(s, 0, sizeof *s);
}

void sampler_foreach_stack(void (*fn)(void *ctx, const struct sampler_stack *s), void *ctx) {
  struct sampler_snapshot snap;
  if (sampler_snapshot(&snap, 0) != 0) return;
  sampler_snapshot_foreach(&snap, fn, ctx);
  sampler_snapshot_free(&snap);
}

const char *sampler_frame_name(uint32_t id) { return intern_name(id); }

size_t sampler_frame_count(void) { return intern_count(); }

_Static_assert(sizeof(struct alloc_frame) == sizeof(jvmtiFrameInfo) &&
                   offsetof(struct alloc_frame, method) == offsetof(jvmtiFrameInfo, method) &&
                   offsetof(struct alloc_frame, bci) == offsetof(jvmtiFrameInfo, location),
               "GetStackTrace's frames are queued as they are");

int sampler_alloc_sample(const char *sig, size_t sig_len, uint64_t size,
                         const jvmtiFrameInfo *frames, int n, uint64_t cost_began) {
  return alloc_push(sig, sig_len, size, (const struct alloc_frame *)frames, n, cost_began);
}

uint64_t sampler_cost_begin(int lock) { return alloc_cost_begin(lock); }

void sampler_lock_walk_fallback(void) { lock_count_jvmti_walk(); }

void sampler_alloc_walk_fallback(void) { alloc_count_jvmti_walk(); }

_Static_assert(sizeof(struct stubwalk_frame) == sizeof(jvmtiFrameInfo) &&
                   offsetof(struct stubwalk_frame, method) == offsetof(jvmtiFrameInfo, method) &&
                   offsetof(struct stubwalk_frame, bci) == offsetof(jvmtiFrameInfo, location),
               "frames corrected in place");

int sampler_stub_exact(JNIEnv *self, jvmtiFrameInfo *frames, int n, int depth) {
  if (!jvm_layout.env_known || !jvm_layout.codecache_ok || !self) return n;
  return stubwalk_exact_top(&jvm_layout.hotspot, &jvm_layout.codecache,
                            (const char *)self - jvm_layout.hotspot.env,
                            (struct stubwalk_frame *)(void *)frames, n, depth);
}

int sampler_stub_make_walkable(JNIEnv *self) {
  if (!jvm_layout.env_known || !jvm_layout.codecache_ok || !self) return 0;
  return stubwalk_complete_top(&jvm_layout.hotspot, &jvm_layout.codecache,
                               (const char *)self - jvm_layout.hotspot.env);
}

int sampler_lock_take(uint64_t wait_ns) { return lock_take(wait_ns); }

int sampler_lock_wait(const char *sig, size_t sig_len, uint64_t wait_ns,
                      const jvmtiFrameInfo *frames, int n, uint64_t cost_began) {
  return lock_push(sig, sig_len, wait_ns, (const struct alloc_frame *)frames, n, cost_began);
}

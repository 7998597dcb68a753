/*
 * jfr_profile.c — the profile as a JFR recording (jfr_profile.h): the snapshot's stacks made
 * into JFR stack traces (leaf first, names split into class, method and line, frame types from
 * the frames' kinds), its time axis into events.
 *
 * Not thread-safe (one writer); not signal-safe.
 */
#include "jfr_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "flamegraph.h"
#include "jfr.h"
#include "names.h"
#include "options.h"

/* One frame's pieces, cut out of its name into a buffer of the stack's. */
struct frame_text {
  struct jfr_frame *frames;
  char *text; /* the frames' strings, each NUL-terminated */
  size_t cap_frames, cap_text;
  int kinds; /* jfr_profile_info's */
};

/* The JFR frame type of a kind (fg_frame_kind's names); *java: a Java method's name. kinds: the
 * profile's Java frames carry their kinds (a plain Java frame is then a native method). */
static enum jfr_frame_type frame_type(const char *kind, int kinds, int *java) {
  *java = 1;
  if (!strcmp(kind, "java")) return kinds ? JFR_FRAME_NATIVE : JFR_FRAME_JIT;
  if (!strcmp(kind, "jit")) return JFR_FRAME_JIT;
  if (!strcmp(kind, "inlined")) return JFR_FRAME_INLINED;
  if (!strcmp(kind, "interpreted")) return JFR_FRAME_INTERPRETED;
  *java = 0;
  return JFR_FRAME_NATIVE;
}

/* Whether kind came from a kind suffix the agent recorded (not from the name's shape). */
static int kind_recorded(const char *kind) {
  return !strcmp(kind, "jit") || !strcmp(kind, "inlined") || !strcmp(kind, "interpreted");
}

/* Makes room for n frames with text of `text` bytes. 0 or -ENOMEM. */
static int frame_room(struct frame_text *ft, size_t n, size_t text) {
  if (n > ft->cap_frames) {
    struct jfr_frame *p = realloc(ft->frames, n * sizeof *p);
    if (!p) return -ENOMEM;
    ft->frames = p;
    ft->cap_frames = n;
  }
  if (text > ft->cap_text) {
    char *p = realloc(ft->text, text);
    if (!p) return -ENOMEM;
    ft->text = p;
    ft->cap_text = text;
  }
  return 0;
}

/* The JFR stack of snapshot stack st (root first there, leaf first here; a thread root left
 * out, and the leaf too with drop_leaf) into *id. 0 or a negative code. */
static int stack_of(struct jfr_writer *w, struct frame_text *ft, const struct sampler_stack *st,
                    int drop_leaf, uint32_t *id) {
  int first = 0;
  const char *tname;
  size_t tlen;
  int64_t tid;
  if (st->n > 1 && names_thread_root(sampler_frame_name(st->frames[0]), &tname, &tlen, &tid))
    first = 1;
  size_t n = (size_t)(st->n - first - drop_leaf), text = 0;
  for (int i = first; i < st->n; i++) text += strlen(sampler_frame_name(st->frames[i])) + 2;
  int rc = frame_room(ft, n ? n : 1, text ? text : 1);
  if (rc) return rc;
  /* pointers into ft->text are taken once it no longer moves */
  char *t = ft->text;
  for (size_t k = 0; k < n; k++) {
    const char *name = sampler_frame_name(st->frames[st->n - 1 - drop_leaf - (int)k]);
    size_t shown, len = strlen(name), bare;
    int java;
    const char *kind = fg_frame_kind(name, len, &shown);
    int64_t line = 0;
    size_t cut = names_split_line(name, shown, &line); /* "Cls.m:12": the rule sees "Cls.m" */
    if (cut != shown && !kind_recorded(kind)) kind = fg_frame_kind(name, cut, &bare);
    enum jfr_frame_type type = frame_type(kind, ft->kinds, &java);
    if (java)
      shown = cut;
    else
      line = 0;
    const char *dot = NULL;
    if (java)
      for (size_t i = shown; i > 0; i--)
        if (name[i - 1] == '.') {
          dot = name + i - 1;
          break;
        }
    struct jfr_frame *f = &ft->frames[k];
    if (dot) { /* "pkg/Cls.method": class "pkg/Cls", method "method" */
      size_t cl = (size_t)(dot - name);
      memcpy(t, name, cl);
      t[cl] = '\0';
      f->class_name = t;
      t += cl + 1;
      memcpy(t, dot + 1, shown - cl - 1);
      t[shown - cl - 1] = '\0';
      f->method = t;
      t += shown - cl;
    } else { /* a C function or a pseudo-frame: its whole name, no class */
      t[0] = '\0';
      f->class_name = t++;
      memcpy(t, name, shown);
      t[shown] = '\0';
      f->method = t;
      t += shown + 1;
    }
    f->signature = "";
    f->type = type;
    f->line = line > 0 && line <= INT32_MAX ? (int32_t)line : -1;
    f->bci = -1;
  }
  return jfr_stack(w, ft->frames, n, 0, id);
}

/* The thread state of a wall-clock sample: its leaf's. */
static enum jfr_thread_state state_of(const struct jfr_profile_info *info,
                                      const struct sampler_stack *st) {
  if (!info->wall || st->n <= 0) return JFR_STATE_RUNNABLE;
  const char *leaf = sampler_frame_name(st->frames[st->n - 1]);
  return !strcmp(leaf, "[sleeping]") || !strcmp(leaf, "[parked]") || !strcmp(leaf, "[waiting]") ||
                 !strcmp(leaf, "[blocked on monitor]")
             ? JFR_STATE_SLEEPING
             : JFR_STATE_RUNNABLE;
}

struct summary_ctx {
  struct jfr_writer *w;
  int64_t ticks;
};

static int summary(void *vctx, const char *key, const char *value) {
  struct summary_ctx *c = vctx;
  return jfr_key_value(c->w, JFR_SUMMARY, c->ticks, key, value);
}

/* The internal name of the class an allocation or lock stack's leaf names ("byte[]_[a]" ->
 * "[B", "java.lang.Object[]_[a]" -> "[Ljava/lang/Object;", "java.lang.String_[l]" ->
 * "java/lang/String") into out[cap]; a leaf of another kind ([sample lost]) as it is. Returns 1
 * when the leaf was such a class (not a frame of the stack then), else 0. */
static int leaf_class(const char *leaf, char *out, size_t cap) {
  size_t shown, len = strlen(leaf);
  const char *kind = fg_frame_kind(leaf, len, &shown);
  if (strcmp(kind, "alloc") && strcmp(kind, "lock")) {
    snprintf(out, cap, "%s", leaf);
    return 0;
  }
  static const char *const prim[] = {"byte",  "B", "char",    "C", "double", "D",
                                     "float", "F", "int",     "I", "long",   "J",
                                     "short", "S", "boolean", "Z", "void",   "V"};
  size_t dims = 0;
  while (shown >= 2 && !memcmp(leaf + shown - 2, "[]", 2)) shown -= 2, dims++;
  size_t o = 0;
  for (size_t d = 0; d < dims && o + 1 < cap; d++) out[o++] = '[';
  const char *letter = NULL;
  for (size_t k = 0; dims && k < sizeof prim / sizeof *prim; k += 2)
    if (strlen(prim[k]) == shown && !memcmp(leaf, prim[k], shown)) letter = prim[k + 1];
  if (letter) {
    if (o + 1 < cap) out[o++] = letter[0];
  } else {
    if (dims && o + 1 < cap) out[o++] = 'L';
    for (size_t i = 0; i < shown && o + 1 < cap; i++) out[o++] = leaf[i] == '.' ? '/' : leaf[i];
    if (dims && o + 1 < cap) out[o++] = ';';
  }
  out[o] = '\0';
  return 1;
}

/* Whether st is to be written as a stack of kind `only` (enum sampler_event; -1: any, the one
 * event of a single-event profile; cpu and wall are one). */
static int of_kind(const struct sampler_stack *st, int only) {
  if (only < 0) return 1;
  int clock = st->kind == SAMPLER_EVENT_CPU || st->kind == SAMPLER_EVENT_WALL;
  return only == SAMPLER_EVENT_CPU || only == SAMPLER_EVENT_WALL ? clock : st->kind == only;
}

/* event=alloc or lock: the time axis's entries as events of their recorded samples, spread
 * over the entry's cell, its weight shared among them (the rest with the first) — with `lock`,
 * jdk.ThreadPark (a stack whose frame under its lock class is Unsafe.park, or a park without a
 * blocker) or jdk.JavaMonitorEnter, the weight their durations; else
 * jdk.ObjectAllocationSample, the weight their bytes. The leaf's class is the event's class, not
 * a frame. 0 or a negative code. */
static int queued_events(struct jfr_writer *w, const struct sampler_snapshot *s,
                         uint32_t *stack_ids, const uint32_t *thread_ids, struct frame_text *ft,
                         int lock, int only) {
  const struct sampler_time *tm = &s->time;
  uint32_t *class_ids = malloc((s->n ? s->n : 1) * sizeof *class_ids);
  unsigned char *park = malloc(s->n ? s->n : 1);
  int rc = class_ids && park ? 0 : -ENOMEM;
  for (size_t i = 0; !rc && i < tm->n; i++) {
    const struct sampler_time_entry *e = &tm->entries[i];
    if (e->stack >= s->n || e->thread >= tm->nthreads) {
      rc = -EINVAL;
      break;
    }
    const struct sampler_stack *st = &s->stacks[e->stack];
    if (!of_kind(st, only)) continue;
    if (stack_ids[e->stack] == UINT32_MAX && st->n > 0) {
      char cls[1024];
      const char *leaf = sampler_frame_name(st->frames[st->n - 1]);
      int drop = leaf_class(leaf, cls, sizeof cls);
      const char *under = st->n > 1 ? sampler_frame_name(st->frames[st->n - 2]) : "";
      int none = lock && !strcmp(leaf, "[park without blocker]");
      park[e->stack] = none || (drop && !strcmp(under, "jdk/internal/misc/Unsafe.park"));
      class_ids[e->stack] = 0;
      if (drop || !lock) rc = jfr_class(w, cls, &class_ids[e->stack]);
      if (!rc) rc = stack_of(w, ft, st, drop || none, &stack_ids[e->stack]);
    }
    if (rc || stack_ids[e->stack] == UINT32_MAX || !e->cpu_ns) continue;
    uint64_t n = e->samples ? e->samples : 1, each = e->cpu_ns / n;
    int64_t at = (int64_t)(e->cell * tm->cell_ns);
    for (uint64_t k = 0; !rc && k < n; k++) {
      int64_t t = at + (int64_t)(k * tm->cell_ns / n);
      if (t > (int64_t)tm->duration_ns) t = (int64_t)tm->duration_ns; /* the last cell */
      uint64_t v = k ? each : e->cpu_ns - each * (n - 1);             /* the rest with the first */
      uint32_t th = thread_ids[e->thread], sk = stack_ids[e->stack], c = class_ids[e->stack];
      rc = lock ? jfr_lock_wait(w, park[e->stack], t, v, th, sk, c)
                : jfr_allocation(w, t, th, sk, c, v);
    }
  }
  free(class_ids);
  free(park);
  return rc;
}

/* The events of the time axis (those of stacks of kind `only`: of_kind). 0 or a negative
 * code. */
static int events(struct jfr_writer *w, const struct jfr_profile_info *info,
                  const struct sampler_snapshot *s, uint32_t *stack_ids, const uint32_t *thread_ids,
                  struct frame_text *ft, int only) {
  const struct sampler_time *tm = &s->time;
  for (size_t i = 0; i < tm->n; i++) {
    const struct sampler_time_entry *e = &tm->entries[i];
    if (e->stack >= s->n || e->thread >= tm->nthreads) return -EINVAL;
    const struct sampler_stack *st = &s->stacks[e->stack];
    if (!of_kind(st, only)) continue;
    if (stack_ids[e->stack] == UINT32_MAX) {
      int rc = stack_of(w, ft, st, 0, &stack_ids[e->stack]);
      if (rc) return rc;
    }
    int64_t at = (int64_t)(e->cell * tm->cell_ns);
    enum jfr_thread_state state = state_of(info, st);
    for (uint64_t k = 0; k < e->units; k++) {
      int64_t t = at + (int64_t)(k * tm->cell_ns / e->units);
      if (t > (int64_t)tm->duration_ns) t = (int64_t)tm->duration_ns; /* the last cell */
      int rc = jfr_sample(w, JFR_EXECUTION_SAMPLE, t, thread_ids[e->thread], stack_ids[e->stack],
                          state, 0);
      if (rc) return rc;
    }
    if (e->cpu_ns) {
      int rc = jfr_sample(w, JFR_CPU_SAMPLE, at, thread_ids[e->thread], stack_ids[e->stack], state,
                          e->cpu_ns);
      if (rc) return rc;
    }
  }
  return 0;
}

int jfr_profile_write(FILE *f, const struct jfr_profile_info *info,
                      const struct sampler_snapshot *s) {
  const struct sampler_time *tm = &s->time;
  struct jfr_clock clock = {tm->start_wall_ns, 0, 1000000000};
  struct jfr_writer *w;
  int rc = jfr_open(&w, f, &clock);
  if (rc) return rc;
  uint32_t *stack_ids = malloc((s->n ? s->n : 1) * sizeof *stack_ids);
  uint32_t *thread_ids = malloc((tm->nthreads ? tm->nthreads : 1) * sizeof *thread_ids);
  struct frame_text ft = {.kinds = info->kinds};
  if (!stack_ids || !thread_ids) rc = -ENOMEM;
  for (size_t i = 0; !rc && i < s->n; i++) stack_ids[i] = UINT32_MAX; /* written when used */
  for (size_t i = 0; !rc && i < tm->nthreads; i++)
    rc = jfr_thread(w, tm->threads[i].tid, tm->threads[i].java_id, tm->threads[i].name,
                    &thread_ids[i]);
  char alloc[32], names[64];
  snprintf(alloc, sizeof alloc, "%llu", (unsigned long long)info->alloc_bytes);
  int queued = info->alloc_bytes || info->lock;
  int rounds = info->clock || !queued; /* cpu or wall; without, no thread signalled: no hasrun */
  unsigned ev = (rounds ? 1u << (info->wall ? SAMPLER_EVENT_WALL : SAMPLER_EVENT_CPU) : 0) |
                (info->alloc_bytes ? 1u << SAMPLER_EVENT_ALLOC : 0) |
                (info->lock ? 1u << SAMPLER_EVENT_LOCK : 0);
  opt_event_names(ev, ",", names, sizeof names);
  int several = (ev & (ev - 1)) != 0;
  const char *const settings[][2] = {{"event", names},
                                     {"interval", info->interval},
                                     {"hasrun", rounds ? info->hasrun : NULL},
                                     {"alloc", info->alloc_bytes ? alloc : NULL},
                                     {"lock", info->lock ? info->lock_threshold : NULL},
                                     {"program", info->program}};
  for (size_t i = 0; !rc && i < sizeof settings / sizeof *settings; i++)
    if (settings[i][1]) rc = jfr_key_value(w, JFR_SETTING, 0, settings[i][0], settings[i][1]);
  /* each event's; a profile of one event writes every stack as that event's */
  if (!rc && rounds)
    rc = events(w, info, s, stack_ids, thread_ids, &ft, several ? SAMPLER_EVENT_CPU : -1);
  if (!rc && info->alloc_bytes)
    rc = queued_events(w, s, stack_ids, thread_ids, &ft, 0, several ? SAMPLER_EVENT_ALLOC : -1);
  if (!rc && info->lock)
    rc = queued_events(w, s, stack_ids, thread_ids, &ft, 1, several ? SAMPLER_EVENT_LOCK : -1);
  for (size_t i = 0; !rc && i < tm->nmarks; i++) {
    const char *what = sampler_mark_name(tm->marks[i].kind);
    if (what) rc = jfr_mark(w, (int64_t)tm->marks[i].at_ns, tm->marks[i].dur_ns, what);
  }
  struct summary_ctx sc = {w, (int64_t)tm->duration_ns};
  if (!rc) rc = counters_each(&s->report, summary, &sc);
  if (!rc && tm->marks_lost) {
    char lost[24];
    snprintf(lost, sizeof lost, "%llu", (unsigned long long)tm->marks_lost);
    rc = jfr_key_value(w, JFR_SUMMARY, (int64_t)tm->duration_ns, "marks_lost", lost);
  }
  free(stack_ids);
  free(thread_ids);
  free(ft.frames);
  free(ft.text);
  if (rc) {
    jfr_abort(w);
    return rc;
  }
  return jfr_close(w, (int64_t)tm->duration_ns);
}

/*
 * jfr.c — the JFR recording writer (jfr.h). Events go to the FILE as they come; what events
 * point to (threads, stacks, methods, classes, packages, symbols) is interned into pools — each
 * an arena of keys with an open-addressing hash — and written once at jfr_close as checkpoint
 * events, followed by the metadata event built from the TYPES[] table below. The reader (the
 * JDK's jdk.jfr.internal.consumer) finds both through the chunk header, which is written with
 * zero offsets and an "in progress" state first and patched last, so a file cut short is never
 * read as a whole recording. Runs on one thread, never in the signal handler.
 */
#include "jfr.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- growable byte buffers ---- */

struct buf {
  uint8_t *p;
  size_t len, cap;
  int oom; /* a put failed: the buffer is incomplete */
};

static int buf_reserve(struct buf *b, size_t n) {
  if (b->oom) return -ENOMEM;
  if (b->len + n <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n) {
    if (cap > SIZE_MAX / 2) return b->oom = 1, -ENOMEM;
    cap *= 2;
  }
  uint8_t *p = realloc(b->p, cap);
  if (!p) return b->oom = 1, -ENOMEM;
  b->p = p;
  b->cap = cap;
  return 0;
}

static void put_bytes(struct buf *b, const void *s, size_t n) {
  if (buf_reserve(b, n) == 0) {
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
  }
}

static void put_u8(struct buf *b, uint8_t v) { put_bytes(b, &v, 1); }

size_t jfr_varint(uint64_t v, uint8_t out[9]) {
  size_t n = 0;
  /* eight bytes carry 7 bits each with a continuation bit; a ninth, if needed, carries 8 */
  while (n < 8) {
    if (v < 0x80) {
      out[n++] = (uint8_t)v;
      return n;
    }
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

static void put_var(struct buf *b, uint64_t v) {
  uint8_t tmp[9];
  put_bytes(b, tmp, jfr_varint(v, tmp));
}

/* A size written in a fixed 4 bytes (continuation bits on the first three), so that it can be
 * filled in after what it measures: JFR's readers decode it as any compressed int. */
static void patch_size4(uint8_t *at, uint32_t v) {
  at[0] = (uint8_t)(v | 0x80);
  at[1] = (uint8_t)((v >> 7) | 0x80);
  at[2] = (uint8_t)((v >> 14) | 0x80);
  at[3] = (uint8_t)((v >> 21) & 0x7f);
}

#define SIZE4_MAX ((1u << 28) - 1)

static void put_be64(uint8_t *at, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) at[i] = (uint8_t)v;
}

/* ---- names: (modified) UTF-8 to UTF-8 ---- */

/* The length of the valid UTF-8 or modified-UTF-8 sequence at s and its code point in *cp
 * (surrogates included), or 0 when s begins none. */
static size_t utf8_seq(const uint8_t *s, uint32_t *cp) {
  uint8_t c = s[0];
  if (c < 0x80) return *cp = c, 1;
  if (c == 0xC0 && s[1] == 0x80) return *cp = 0, 2; /* modified UTF-8's NUL */
  size_t n;
  uint32_t v, min;
  if ((c & 0xE0) == 0xC0)
    n = 2, v = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0)
    n = 3, v = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0)
    n = 4, v = c & 0x07, min = 0x10000;
  else
    return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
    v = v << 6 | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF) return 0;
  return *cp = v, n;
}

static size_t utf8_put(uint32_t cp, char *out) {
  uint8_t *o = (uint8_t *)out;
  if (cp < 0x80) return o[0] = (uint8_t)cp, 1;
  if (cp < 0x800) return o[0] = (uint8_t)(0xC0 | cp >> 6), o[1] = (uint8_t)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    o[0] = (uint8_t)(0xE0 | cp >> 12);
    o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (uint8_t)(0xF0 | cp >> 18);
  o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
  o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
  o[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

size_t jfr_utf8(const char *s, char *out) {
  const uint8_t *p = (const uint8_t *)s;
  size_t n = 0;
  while (*p) {
    uint32_t cp, lo;
    size_t k = utf8_seq(p, &cp);
    if (k == 0) { /* not UTF-8: one byte becomes '?' */
      out[n++] = '?';
      p++;
      continue;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) { /* a high surrogate: a pair in modified UTF-8? */
      size_t k2 = utf8_seq(p + k, &lo);
      if (k2 && lo >= 0xDC00 && lo <= 0xDFFF) {
        n += utf8_put(0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00), out + n); /* 6 -> 4 */
        p += k + k2;
        continue;
      }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) { /* a lone surrogate is no character */
      out[n++] = '?';
      p += k;
      continue;
    }
    n += utf8_put(cp, out + n); /* never longer than its input (C0 80 -> 00) */
    p += k;
  }
  return n;
}

/* ---- pools: interned keys with dense ids from 1 ---- */

struct pool {
  struct buf keys;  /* entry: u32 length, then the key's bytes */
  size_t *off;      /* id i+1 at keys.p + off[i] */
  uint32_t n, ncap; /* entries, capacity of off */
  uint32_t *slots;  /* 0 = empty, else an id */
  uint32_t nslots;  /* a power of two, kept over twice n */
};

#define POOL_MAX_IDS 0x7fffffffu

static uint64_t hash_bytes(const void *key, size_t len) {
  const uint8_t *p = key;
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

static const uint8_t *pool_key(const struct pool *p, uint32_t id, uint32_t *len) {
  const uint8_t *e = p->keys.p + p->off[id - 1];
  memcpy(len, e, sizeof *len);
  return e + sizeof *len;
}

static int pool_grow_slots(struct pool *p) {
  uint32_t ns = p->nslots ? p->nslots * 2 : 64;
  if (ns == 0) return -E2BIG;
  uint32_t *s = calloc(ns, sizeof *s);
  if (!s) return -ENOMEM;
  for (uint32_t id = 1; id <= p->n; id++) {
    uint32_t len;
    const uint8_t *k = pool_key(p, id, &len);
    uint32_t i = (uint32_t)hash_bytes(k, len) & (ns - 1);
    while (s[i]) i = (i + 1) & (ns - 1);
    s[i] = id;
  }
  free(p->slots);
  p->slots = s;
  p->nslots = ns;
  return 0;
}

/* The id of key (len bytes), added if new. 0, -ENOMEM or -E2BIG. */
static int pool_intern(struct pool *p, const void *key, size_t len, uint32_t *id) {
  if (len > UINT32_MAX - 8) return -E2BIG;
  if ((uint64_t)(p->n + 1) * 2 > p->nslots) {
    if (p->n >= POOL_MAX_IDS) return -E2BIG;
    int rc = pool_grow_slots(p);
    if (rc) return rc;
  }
  uint32_t mask = p->nslots - 1, i = (uint32_t)hash_bytes(key, len) & mask;
  for (; p->slots[i]; i = (i + 1) & mask) {
    uint32_t l;
    const uint8_t *k = pool_key(p, p->slots[i], &l);
    if (l == len && memcmp(k, key, len) == 0) return *id = p->slots[i], 0;
  }
  if (p->n == p->ncap) {
    uint32_t nc = p->ncap ? p->ncap * 2 : 64;
    size_t *o = realloc(p->off, (size_t)nc * sizeof *o);
    if (!o) return -ENOMEM;
    p->off = o;
    p->ncap = nc;
  }
  size_t at = p->keys.len;
  uint32_t l32 = (uint32_t)len;
  put_bytes(&p->keys, &l32, sizeof l32);
  put_bytes(&p->keys, key, len);
  if (p->keys.oom) return -ENOMEM;
  p->off[p->n++] = at;
  p->slots[i] = p->n;
  return *id = p->n, 0;
}

static void pool_free(struct pool *p) {
  free(p->keys.p);
  free(p->off);
  free(p->slots);
}

/* ---- the types: ids, names, fields, as the metadata event describes them ---- */

enum type_id {
  T_LONG = 20, /* ids 0 and 1 are the metadata and checkpoint events */
  T_INT,
  T_BOOLEAN,
  T_STRING,
  T_LABEL,
  T_CATEGORY,
  T_TIMESTAMP,
  T_TIMESPAN,
  T_THREAD,
  T_STACKTRACE,
  T_STACKFRAME,
  T_METHOD,
  T_CLASS,
  T_CLASSLOADER,
  T_PACKAGE,
  T_MODULE,
  T_SYMBOL,
  T_FRAMETYPE,
  T_THREADSTATE,
  T_EXECUTION_SAMPLE,
  T_NATIVE_METHOD_SAMPLE,
  T_CPU_SAMPLE,
  T_SETTING,
  T_SUMMARY,
  T_DATAAMOUNT,
  T_ALLOCATION_SAMPLE,
  T_MARK,
  T_MONITOR_ENTER,
  T_THREAD_PARK,
  T_CONTENTTYPE,
  T_MEMORYADDRESS,
  T_END
};

#define F_CP 1       /* a constant-pool reference */
#define F_ARRAY 2    /* dimension 1 */
#define F_TICKS 4    /* @Timestamp("TICKS") */
#define F_NANOS 8    /* @Timespan("NANOSECONDS") */
#define F_BYTES 16   /* @DataAmount("BYTES") */
#define F_MILLIS 32  /* @Timestamp("MILLISECONDS_SINCE_EPOCH") */
#define F_ADDRESS 64 /* @MemoryAddress */

struct field_def {
  const char *name;
  int type;
  unsigned flags;
  const char *label;
};

struct type_def {
  int id;
  const char *name, *super, *label;
  int simple;       /* one field that stands for the value: unwrapped by readers */
  int content_type; /* an annotation that gives a value's unit or kind (@ContentType): readers
                     * format the values so annotated (`jfr print`: "5.9 ms", "N/A", hex) */
  const char *category[2]; /* an event's category path */
  struct field_def fields[8];
};

#define ANNOTATION "java.lang.annotation.Annotation"
#define EVENT "jdk.jfr.Event"
/* clang-format off */
#define VALUE {{"value", T_STRING, 0, NULL}}
#define SAMPLE_FIELDS                                                                              \
  {"startTime", T_LONG, F_TICKS, "Start Time"}, {"sampledThread", T_THREAD, F_CP, "Thread"},        \
  {"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"}, {"state", T_THREADSTATE, F_CP, "Thread State"}
/* clang-format on */

/* Every type the file uses; the field order here is the order values are written in. */
static const struct type_def TYPES[] = {
    {T_LONG, "long"},
    {T_INT, "int"},
    {T_BOOLEAN, "boolean"},
    {T_STRING, "java.lang.String"},
    {T_LABEL, "jdk.jfr.Label", ANNOTATION, .fields = VALUE},
    {T_CATEGORY, "jdk.jfr.Category", ANNOTATION, .fields = {{"value", T_STRING, F_ARRAY, NULL}}},
    {T_TIMESTAMP, "jdk.jfr.Timestamp", ANNOTATION, .content_type = 1, .fields = VALUE},
    {T_TIMESPAN, "jdk.jfr.Timespan", ANNOTATION, .content_type = 1, .fields = VALUE},
    {T_THREAD, "java.lang.Thread", .label = "Thread",
     .fields = {{"osName", T_STRING, 0, "OS Thread Name"},
                {"osThreadId", T_LONG, 0, "OS Thread Id"},
                {"javaName", T_STRING, 0, "Java Thread Name"},
                {"javaThreadId", T_LONG, 0, "Java Thread Id"}}},
    {T_STACKTRACE, "jdk.types.StackTrace", .label = "Stacktrace",
     .fields = {{"truncated", T_BOOLEAN, 0, "Truncated"},
                {"frames", T_STACKFRAME, F_ARRAY, "Stack Frames"}}},
    {T_STACKFRAME, "jdk.types.StackFrame",
     .fields = {{"method", T_METHOD, F_CP, "Java Method"},
                {"lineNumber", T_INT, 0, "Line Number"},
                {"bytecodeIndex", T_INT, 0, "Bytecode Index"},
                {"type", T_FRAMETYPE, F_CP, "Frame Type"}}},
    {T_METHOD, "jdk.types.Method", .label = "Java Method",
     .fields = {{"type", T_CLASS, F_CP, "Type"},
                {"name", T_SYMBOL, F_CP, "Name"},
                {"descriptor", T_SYMBOL, F_CP, "Descriptor"},
                {"modifiers", T_INT, 0, "Modifiers"},
                {"hidden", T_BOOLEAN, 0, "Hidden"}}},
    {T_CLASS, "java.lang.Class", .label = "Java Class",
     .fields = {{"classLoader", T_CLASSLOADER, F_CP, "Class Loader"},
                {"name", T_SYMBOL, F_CP, "Name"},
                {"package", T_PACKAGE, F_CP, "Package"},
                {"modifiers", T_INT, 0, "Access Modifiers"},
                {"hidden", T_BOOLEAN, 0, "Hidden"}}},
    {T_CLASSLOADER, "jdk.types.ClassLoader", .label = "Java Class Loader",
     .fields = {{"type", T_CLASS, F_CP, "Type"}, {"name", T_SYMBOL, F_CP, "Name"}}},
    {T_PACKAGE, "jdk.types.Package", .label = "Package",
     .fields = {{"name", T_SYMBOL, F_CP, "Name"},
                {"module", T_MODULE, F_CP, "Module"},
                {"exported", T_BOOLEAN, 0, "Exported"}}},
    {T_MODULE, "jdk.types.Module", .label = "Module",
     .fields = {{"name", T_SYMBOL, F_CP, "Name"},
                {"version", T_SYMBOL, F_CP, "Version"},
                {"location", T_SYMBOL, F_CP, "Location"},
                {"classLoader", T_CLASSLOADER, F_CP, "Class Loader"}}},
    {T_SYMBOL, "jdk.types.Symbol", .label = "Symbol", .simple = 1,
     .fields = {{"string", T_STRING, 0, "String"}}},
    {T_FRAMETYPE, "jdk.types.FrameType", .label = "Frame type", .simple = 1,
     .fields = {{"description", T_STRING, 0, "Description"}}},
    {T_THREADSTATE, "jdk.types.ThreadState", .label = "Java Thread State", .simple = 1,
     .fields = {{"name", T_STRING, 0, "Name"}}},
    {T_EXECUTION_SAMPLE, "jdk.ExecutionSample", EVENT, "Method Profiling Sample",
     .category = {"Java Virtual Machine", "Profiling"}, .fields = {SAMPLE_FIELDS}},
    {T_NATIVE_METHOD_SAMPLE, "jdk.NativeMethodSample", EVENT, "Method Profiling Sample Native",
     .category = {"Java Virtual Machine", "Profiling"}, .fields = {SAMPLE_FIELDS}},
    {T_CPU_SAMPLE, "sampler.CPUSample", EVENT, "CPU Sample", .category = {"Sampler"},
     .fields = {SAMPLE_FIELDS, {"cpuTime", T_LONG, F_NANOS, "CPU Time"}}},
    {T_SETTING, "sampler.Setting", EVENT, "Sampler Setting", .category = {"Sampler"},
     .fields = {{"startTime", T_LONG, F_TICKS, "Start Time"},
                {"name", T_STRING, 0, "Name"},
                {"value", T_STRING, 0, "Value"}}},
    {T_SUMMARY, "sampler.Summary", EVENT, "Sampler Summary", .category = {"Sampler"},
     .fields = {{"startTime", T_LONG, F_TICKS, "Start Time"},
                {"name", T_STRING, 0, "Name"},
                {"value", T_STRING, 0, "Value"}}},
    {T_DATAAMOUNT, "jdk.jfr.DataAmount", ANNOTATION, .content_type = 1, .fields = VALUE},
    {T_CONTENTTYPE, "jdk.jfr.ContentType", ANNOTATION},
    {T_MEMORYADDRESS, "jdk.jfr.MemoryAddress", ANNOTATION, .content_type = 1},
    {T_ALLOCATION_SAMPLE, "jdk.ObjectAllocationSample", EVENT, "Object Allocation Sample",
     .category = {"Java Application"},
     .fields = {{"startTime", T_LONG, F_TICKS, "Start Time"},
                {"eventThread", T_THREAD, F_CP, "Event Thread"},
                {"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
                {"objectClass", T_CLASS, F_CP, "Object Class"},
                {"weight", T_LONG, F_BYTES, "Sample Weight"}}},
    {T_MARK, "sampler.Mark", EVENT, "Sampler Mark", .category = {"Sampler"},
     .fields = {{"startTime", T_LONG, F_TICKS, "Start Time"},
                {"duration", T_LONG, F_NANOS, "Duration"},
                {"name", T_STRING, 0, "Name"}}},
    {T_MONITOR_ENTER, "jdk.JavaMonitorEnter", EVENT, "Java Monitor Blocked",
     .category = {"Java Application"},
     .fields = {{"startTime", T_LONG, F_TICKS, "Start Time"},
                {"duration", T_LONG, F_NANOS, "Duration"},
                {"eventThread", T_THREAD, F_CP, "Event Thread"},
                {"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
                {"monitorClass", T_CLASS, F_CP, "Monitor Class"},
                {"previousOwner", T_THREAD, F_CP, "Previous Monitor Owner"},
                {"address", T_LONG, F_ADDRESS, "Monitor Address"}}},
    {T_THREAD_PARK, "jdk.ThreadPark", EVENT, "Java Thread Park", .category = {"Java Application"},
     .fields = {{"startTime", T_LONG, F_TICKS, "Start Time"},
                {"duration", T_LONG, F_NANOS, "Duration"},
                {"eventThread", T_THREAD, F_CP, "Event Thread"},
                {"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
                {"parkedClass", T_CLASS, F_CP, "Class Parked On"},
                {"timeout", T_LONG, F_NANOS, "Park Timeout"},
                {"until", T_LONG, F_MILLIS, "Park Until"},
                {"address", T_LONG, F_ADDRESS, "Address of Object Parked"}}},
};

static const char *const FRAME_TYPES[JFR_FRAME_TYPES] = {"Interpreted", "JIT compiled", "Inlined",
                                                         "Native"};
static const char *const STATES[JFR_STATE_COUNT] = {"STATE_RUNNABLE", "STATE_SLEEPING"};
static const int SAMPLE_TYPE[JFR_SAMPLE_KINDS] = {T_EXECUTION_SAMPLE, T_NATIVE_METHOD_SAMPLE,
                                                  T_CPU_SAMPLE};
static const int KV_TYPE[JFR_KV_KINDS] = {T_SETTING, T_SUMMARY};

/* ---- the writer ---- */

#define HEADER_SIZE 68
#define CHECKPOINT_CUT (1u << 20) /* a checkpoint event is cut after this many bytes */

/* Pool keys (fixed-width, packed by hand so that no padding enters a hash). */
struct frame_key {
  uint32_t method;
  int32_t line, bci;
  uint8_t type;
};
#define FRAME_KEY_SIZE 13

struct jfr_writer {
  FILE *f;
  off_t base; /* where the chunk begins in f */
  struct jfr_clock clock;
  uint64_t pos; /* bytes written to the chunk so far */
  int err;      /* the first failure: the file is no recording */
  struct buf ev;
  struct pool symbols, packages, classes, methods, stacks, threads;
  struct pool tids;        /* the OS thread ids seen */
  uint64_t *thread_key;    /* thread id i+1's key in the thread pool */
  uint32_t thread_key_cap; /* capacity of thread_key */
};

static void fail(struct jfr_writer *w, int rc) {
  if (!w->err) w->err = rc;
}

static void emit(struct jfr_writer *w, const void *p, size_t n) {
  if (w->err) return;
  if (fwrite(p, 1, n, w->f) != n) return fail(w, -EIO);
  w->pos += n;
}

/* Starts an event of type id in w->ev: four bytes for its size, then the id. */
static void event_begin(struct jfr_writer *w, uint64_t type) {
  w->ev.len = 0;
  w->ev.oom = 0;
  put_bytes(&w->ev, "\0\0\0\0", 4);
  put_var(&w->ev, type);
}

/* Fills in the event's size and writes it. */
static int event_end(struct jfr_writer *w) {
  if (w->ev.oom)
    fail(w, -ENOMEM);
  else if (w->ev.len > SIZE4_MAX)
    fail(w, -E2BIG);
  else
    patch_size4(w->ev.p, (uint32_t)w->ev.len);
  if (!w->err) emit(w, w->ev.p, w->ev.len);
  return w->err;
}

/* A string in JFR's encoding 3: UTF-8 bytes with their count; s is already UTF-8. */
static void put_str(struct buf *b, const char *s, size_t n) {
  put_u8(b, 3);
  put_var(b, n);
  put_bytes(b, s, n);
}

/* The NUL-terminated s (modified UTF-8 allowed) as a JFR string. */
static void put_name(struct buf *b, const char *s) {
  size_t n = strlen(s);
  if (buf_reserve(b, n + 10) != 0) return;
  b->p[b->len] = 3;
  size_t at = b->len + 1, m = jfr_utf8(s, (char *)b->p + b->len + 10);
  uint8_t tmp[9];
  size_t k = jfr_varint(m, tmp);
  memcpy(b->p + at, tmp, k);
  memmove(b->p + at + k, b->p + b->len + 10, m);
  b->len = at + k + m;
}

static void header(struct jfr_writer *w, uint8_t out[HEADER_SIZE], uint64_t cp, uint64_t meta,
                   uint64_t duration_ns, int finished) {
  memset(out, 0, HEADER_SIZE);
  memcpy(out, "FLR\0", 4);
  out[5] = 2; /* major 2, minor 0 (big-endian u16s) */
  put_be64(out + 8, w->pos);
  put_be64(out + 16, cp);
  put_be64(out + 24, meta);
  put_be64(out + 32, (uint64_t)w->clock.start_ns);
  put_be64(out + 40, duration_ns);
  put_be64(out + 48, (uint64_t)w->clock.start_ticks);
  put_be64(out + 56, (uint64_t)w->clock.ticks_per_second);
  out[64] = finished ? 0 : 1; /* file state: 0 = finished */
  out[67] = 2;                /* flags: the final chunk; ticks not compressed */
}

int jfr_open(struct jfr_writer **out, FILE *f, const struct jfr_clock *clock) {
  if (!out || !f || !clock || clock->ticks_per_second <= 0) return -EINVAL;
  struct jfr_writer *w = calloc(1, sizeof *w);
  if (!w) return -ENOMEM;
  w->f = f;
  w->clock = *clock;
  w->base = ftello(f);
  if (w->base < 0) { /* jfr_close seeks back to the header */
    free(w);
    return -ESPIPE;
  }
  uint8_t h[HEADER_SIZE];
  header(w, h, 0, 0, 0, 0);
  emit(w, h, sizeof h);
  if (w->err) {
    int rc = w->err;
    jfr_abort(w);
    return rc;
  }
  *out = w;
  return 0;
}

/* The id of symbol s (UTF-8 or modified UTF-8). */
static int symbol(struct jfr_writer *w, const char *s, uint32_t *id) {
  size_t n = strlen(s);
  char small[256], *tmp = n < sizeof small ? small : malloc(n + 1);
  if (!tmp) return -ENOMEM;
  int rc = pool_intern(&w->symbols, tmp, jfr_utf8(s, tmp), id);
  if (tmp != small) free(tmp);
  return rc;
}

int jfr_thread(struct jfr_writer *w, int64_t os_tid, int64_t java_id, const char *name,
               uint32_t *id) {
  if (!w || !name || !id) return -EINVAL;
  size_t n = strlen(name);
  uint8_t *key = malloc(16 + n + 1);
  if (!key) return -ENOMEM;
  memcpy(key, &os_tid, 8);
  memcpy(key + 8, &java_id, 8);
  size_t m = jfr_utf8(name, (char *)key + 16);
  if (w->threads.n >= w->thread_key_cap) { /* room for a new thread's key first */
    uint32_t nc = w->thread_key_cap ? w->thread_key_cap * 2 : 64;
    uint64_t *k = realloc(w->thread_key, (size_t)nc * sizeof *k);
    if (!k) {
      free(key);
      return -ENOMEM;
    }
    w->thread_key = k;
    w->thread_key_cap = nc;
  }
  uint32_t before = w->threads.n;
  int rc = pool_intern(&w->threads, key, 16 + m, id);
  free(key);
  if (rc || w->threads.n == before) return rc;
  /* The pool key is the OS thread id, as async-profiler keys it (its converter shows the key as
   * "tid="); a tid the kernel reused for a later thread, or none, gets 2^32 + id instead. */
  uint32_t tid_id, tids = w->tids.n;
  rc = pool_intern(&w->tids, &os_tid, sizeof os_tid, &tid_id);
  int first = !rc && w->tids.n > tids && os_tid > 0 && os_tid < (1LL << 32);
  w->thread_key[*id - 1] = first ? (uint64_t)os_tid : (1ull << 32) + *id;
  return 0;
}

/* The id of the class named `name` (internal form), with its package. */
static int class_of(struct jfr_writer *w, const char *name, uint32_t *id) {
  uint32_t cls[2] = {0, 0}; /* name symbol, package */
  int rc = symbol(w, name, &cls[0]);
  const char *slash = strrchr(name, '/');
  if (!rc && slash && name[0] != '[') {
    char *pkg = strndup(name, (size_t)(slash - name));
    if (!pkg) return -ENOMEM;
    uint32_t sym;
    rc = symbol(w, pkg, &sym);
    free(pkg);
    if (!rc) rc = pool_intern(&w->packages, &sym, sizeof sym, &cls[1]);
  }
  if (!rc) rc = pool_intern(&w->classes, cls, sizeof cls, id);
  return rc;
}

int jfr_class(struct jfr_writer *w, const char *name, uint32_t *id) {
  if (!w || !name || !id) return -EINVAL;
  return class_of(w, name, id);
}

/* The id of a frame's method, with its class and package. */
static int method(struct jfr_writer *w, const struct jfr_frame *fr, uint32_t *id) {
  uint32_t m[3]; /* class, name, signature */
  int rc = class_of(w, fr->class_name, &m[0]);
  if (!rc) rc = symbol(w, fr->method, &m[1]);
  /* an unknown signature is written "()": the JDK's printer cuts the parameters out of the
   * parentheses and fails without them */
  if (!rc) rc = symbol(w, fr->signature[0] ? fr->signature : "()", &m[2]);
  if (!rc) rc = pool_intern(&w->methods, m, sizeof m, id);
  return rc;
}

int jfr_stack(struct jfr_writer *w, const struct jfr_frame *frames, size_t n, int truncated,
              uint32_t *id) {
  if (!w || (!frames && n) || !id) return -EINVAL;
  if (n > (UINT32_MAX - 1) / FRAME_KEY_SIZE) return -E2BIG;
  uint8_t *key = malloc(1 + n * FRAME_KEY_SIZE);
  if (!key) return -ENOMEM;
  key[0] = truncated != 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const struct jfr_frame *fr = &frames[i];
    if (!fr->class_name || !fr->method || !fr->signature || (unsigned)fr->type >= JFR_FRAME_TYPES) {
      rc = -EINVAL;
      break;
    }
    struct frame_key k = {.line = fr->line, .bci = fr->bci, .type = (uint8_t)fr->type};
    rc = method(w, fr, &k.method);
    uint8_t *at = key + 1 + i * FRAME_KEY_SIZE;
    memcpy(at, &k.method, 4);
    memcpy(at + 4, &k.line, 4);
    memcpy(at + 8, &k.bci, 4);
    at[12] = k.type;
  }
  if (!rc) rc = pool_intern(&w->stacks, key, 1 + n * FRAME_KEY_SIZE, id);
  free(key);
  return rc;
}

int jfr_sample(struct jfr_writer *w, enum jfr_sample_kind kind, int64_t ticks, uint32_t thread,
               uint32_t stack, enum jfr_thread_state state, uint64_t cpu_ns) {
  if (!w || (unsigned)kind >= JFR_SAMPLE_KINDS || (unsigned)state >= JFR_STATE_COUNT ||
      thread == 0 || thread > w->threads.n || stack == 0 || stack > w->stacks.n)
    return -EINVAL;
  if (w->err) return w->err;
  event_begin(w, (uint64_t)SAMPLE_TYPE[kind]);
  put_var(&w->ev, (uint64_t)ticks);
  put_var(&w->ev, w->thread_key[thread - 1]);
  put_var(&w->ev, stack);
  put_var(&w->ev, (uint64_t)state);
  if (kind == JFR_CPU_SAMPLE) put_var(&w->ev, cpu_ns);
  return event_end(w);
}

int jfr_allocation(struct jfr_writer *w, int64_t ticks, uint32_t thread, uint32_t stack,
                   uint32_t cls, uint64_t bytes) {
  if (!w || thread == 0 || thread > w->threads.n || stack == 0 || stack > w->stacks.n || cls == 0 ||
      cls > w->classes.n)
    return -EINVAL;
  if (w->err) return w->err;
  event_begin(w, T_ALLOCATION_SAMPLE);
  put_var(&w->ev, (uint64_t)ticks);
  put_var(&w->ev, w->thread_key[thread - 1]);
  put_var(&w->ev, stack);
  put_var(&w->ev, cls);
  put_var(&w->ev, bytes);
  return event_end(w);
}

int jfr_lock_wait(struct jfr_writer *w, int park, int64_t ticks, uint64_t dur_ns, uint32_t thread,
                  uint32_t stack, uint32_t cls) {
  if (!w || thread == 0 || thread > w->threads.n || stack == 0 || stack > w->stacks.n ||
      cls > w->classes.n)
    return -EINVAL;
  if (w->err) return w->err;
  event_begin(w, park ? T_THREAD_PARK : T_MONITOR_ENTER);
  put_var(&w->ev, (uint64_t)ticks);
  put_var(&w->ev, dur_ns);
  put_var(&w->ev, w->thread_key[thread - 1]);
  put_var(&w->ev, stack);
  put_var(&w->ev, cls);
  /* The rest of the JDK's fields, in its order (readers that go by position, not by the
   * metadata — async-profiler's converter — read these events only so): what the agent does not
   * record, as the JDK writes "none" — no previous owner (null), no timeout or deadline
   * (Long.MIN_VALUE, the JDK's value for a park without one), address 0. */
  if (park) {
    put_var(&w->ev, (uint64_t)INT64_MIN); /* timeout */
    put_var(&w->ev, (uint64_t)INT64_MIN); /* until */
  } else {
    put_var(&w->ev, 0); /* previousOwner */
  }
  put_var(&w->ev, 0); /* address */
  return event_end(w);
}

int jfr_key_value(struct jfr_writer *w, enum jfr_kv_kind kind, int64_t ticks, const char *key,
                  const char *value) {
  if (!w || (unsigned)kind >= JFR_KV_KINDS || !key || !value) return -EINVAL;
  if (w->err) return w->err;
  event_begin(w, (uint64_t)KV_TYPE[kind]);
  put_var(&w->ev, (uint64_t)ticks);
  put_name(&w->ev, key);
  put_name(&w->ev, value);
  return event_end(w);
}

int jfr_mark(struct jfr_writer *w, int64_t ticks, uint64_t dur_ns, const char *name) {
  if (!w || !name) return -EINVAL;
  if (w->err) return w->err;
  event_begin(w, T_MARK);
  put_var(&w->ev, (uint64_t)ticks);
  put_var(&w->ev, dur_ns);
  put_name(&w->ev, name);
  return event_end(w);
}

/* ---- jfr_close: checkpoints ---- */

/* Checkpoint events under construction: entries of one pool type go into `entries`; every
 * CHECKPOINT_CUT bytes the event is written and the next one links back to it. */
struct checkpoint {
  struct jfr_writer *w;
  struct buf entries;
  uint64_t type, count;
  int64_t ticks;
  uint64_t last; /* chunk offset of the previous checkpoint, 0 for none */
};

static void cp_flush(struct checkpoint *c) {
  struct jfr_writer *w = c->w;
  if (c->count == 0) return;
  if (c->entries.oom) return fail(w, -ENOMEM);
  event_begin(w, 1);
  /* the reader starts at the last checkpoint and steps back by delta until a delta of 0 */
  uint64_t delta = c->last ? (uint64_t)((int64_t)c->last - (int64_t)w->pos) : 0;
  put_var(&w->ev, (uint64_t)c->ticks);
  put_var(&w->ev, 0); /* duration */
  put_var(&w->ev, delta);
  put_u8(&w->ev, 0);  /* not a flush checkpoint */
  put_var(&w->ev, 1); /* one pool */
  put_var(&w->ev, c->type);
  put_var(&w->ev, c->count);
  put_bytes(&w->ev, c->entries.p, c->entries.len);
  c->last = w->pos;
  event_end(w);
  c->entries.len = 0;
  c->count = 0;
}

/* Begins an entry with key in the pool of type, flushing the checkpoint when it is full. */
static struct buf *cp_entry(struct checkpoint *c, uint64_t type, uint64_t key) {
  if (c->type != type || c->entries.len >= CHECKPOINT_CUT) cp_flush(c);
  c->type = type;
  c->count++;
  put_var(&c->entries, key);
  return &c->entries;
}

static void write_pools(struct jfr_writer *w, struct checkpoint *c) {
  uint32_t len;
  /* frame types keyed 0..3 as the JDK keys them (readers such as async-profiler's converter go
   * by the key, not the name); thread states keyed by enum jfr_thread_state */
  for (int i = 0; i < JFR_FRAME_TYPES; i++)
    put_str(cp_entry(c, T_FRAMETYPE, (uint64_t)i), FRAME_TYPES[i], strlen(FRAME_TYPES[i]));
  for (int i = 0; i < JFR_STATE_COUNT; i++)
    put_str(cp_entry(c, T_THREADSTATE, (uint64_t)i), STATES[i], strlen(STATES[i]));
  for (uint32_t id = 1; id <= w->symbols.n; id++) {
    const uint8_t *k = pool_key(&w->symbols, id, &len);
    put_str(cp_entry(c, T_SYMBOL, id), (const char *)k, len);
  }
  for (uint32_t id = 1; id <= w->packages.n; id++) {
    uint32_t sym;
    memcpy(&sym, pool_key(&w->packages, id, &len), 4);
    struct buf *b = cp_entry(c, T_PACKAGE, id);
    put_var(b, sym); /* name */
    put_var(b, 0);   /* module: unknown */
    put_u8(b, 1);    /* exported */
  }
  for (uint32_t id = 1; id <= w->classes.n; id++) {
    uint32_t k[2];
    memcpy(k, pool_key(&w->classes, id, &len), sizeof k);
    struct buf *b = cp_entry(c, T_CLASS, id);
    put_var(b, 0);    /* class loader: unknown */
    put_var(b, k[0]); /* name */
    put_var(b, k[1]); /* package, 0 for none */
    put_var(b, 0);    /* modifiers */
    put_u8(b, 0);     /* hidden */
  }
  for (uint32_t id = 1; id <= w->methods.n; id++) {
    uint32_t k[3];
    memcpy(k, pool_key(&w->methods, id, &len), sizeof k);
    struct buf *b = cp_entry(c, T_METHOD, id);
    put_var(b, k[0]);
    put_var(b, k[1]);
    put_var(b, k[2]);
    put_var(b, 0); /* modifiers */
    put_u8(b, 0);  /* hidden */
  }
  for (uint32_t id = 1; id <= w->stacks.n; id++) {
    const uint8_t *k = pool_key(&w->stacks, id, &len);
    size_t n = (len - 1) / FRAME_KEY_SIZE;
    struct buf *b = cp_entry(c, T_STACKTRACE, id);
    put_u8(b, k[0]);
    put_var(b, n);
    for (size_t i = 0; i < n; i++) {
      const uint8_t *at = k + 1 + i * FRAME_KEY_SIZE;
      uint32_t m, line, bci;
      memcpy(&m, at, 4);
      memcpy(&line, at + 4, 4);
      memcpy(&bci, at + 8, 4);
      put_var(b, m);
      put_var(b, line); /* an int: -1 as 32 bits, which readers cut back to an int */
      put_var(b, bci);
      put_var(b, at[12]); /* the frame type's key */
    }
  }
  for (uint32_t id = 1; id <= w->threads.n; id++) {
    const uint8_t *k = pool_key(&w->threads, id, &len);
    int64_t tid, jid;
    memcpy(&tid, k, 8);
    memcpy(&jid, k + 8, 8);
    struct buf *b = cp_entry(c, T_THREAD, w->thread_key[id - 1]);
    put_str(b, (const char *)k + 16, len - 16); /* osName */
    put_var(b, (uint64_t)tid);
    if (jid)
      put_str(b, (const char *)k + 16, len - 16); /* javaName */
    else
      put_u8(b, 0); /* null: not a Java thread */
    put_var(b, (uint64_t)jid);
  }
  cp_flush(c);
}

/* ---- jfr_close: metadata ---- */

/* The metadata's element tree refers to its strings by index: they are interned as it is built
 * and written in front of it. */
struct meta {
  struct buf tree;
  struct pool strings;
  int err;
};

static void m_str(struct meta *m, const char *s) {
  uint32_t id = 0;
  int rc = pool_intern(&m->strings, s, strlen(s), &id);
  if (rc && !m->err) m->err = rc;
  put_var(&m->tree, id - 1);
}

static void m_attr(struct meta *m, const char *k, const char *v) {
  m_str(m, k);
  m_str(m, v);
}

static void m_attr_int(struct meta *m, const char *k, long v) {
  char s[24];
  snprintf(s, sizeof s, "%ld", v);
  m_attr(m, k, s);
}

/* <annotation class=ID value=V/>, or <annotation class=ID/> for a NULL value */
static void m_annotation(struct meta *m, int type, const char *value) {
  m_str(m, "annotation");
  put_var(&m->tree, 1 + !!value);
  m_attr_int(m, "class", type);
  if (value) m_attr(m, "value", value);
  put_var(&m->tree, 0);
}

static void m_field(struct meta *m, const struct field_def *f) {
  m_str(m, "field");
  put_var(&m->tree, 2 + !!(f->flags & F_CP) + !!(f->flags & F_ARRAY));
  m_attr(m, "name", f->name);
  m_attr_int(m, "class", f->type);
  if (f->flags & F_CP) m_attr(m, "constantPool", "true");
  if (f->flags & F_ARRAY) m_attr(m, "dimension", "1");
  put_var(&m->tree,
          !!f->label + !!(f->flags & (F_TICKS | F_NANOS | F_BYTES | F_MILLIS | F_ADDRESS)));
  if (f->label) m_annotation(m, T_LABEL, f->label);
  if (f->flags & F_TICKS) m_annotation(m, T_TIMESTAMP, "TICKS");
  if (f->flags & F_MILLIS) m_annotation(m, T_TIMESTAMP, "MILLISECONDS_SINCE_EPOCH");
  if (f->flags & F_NANOS) m_annotation(m, T_TIMESPAN, "NANOSECONDS");
  if (f->flags & F_BYTES) m_annotation(m, T_DATAAMOUNT, "BYTES");
  if (f->flags & F_ADDRESS) m_annotation(m, T_MEMORYADDRESS, NULL);
}

static void m_type(struct meta *m, const struct type_def *t) {
  int nf = 0;
  while (nf < (int)(sizeof t->fields / sizeof *t->fields) && t->fields[nf].name) nf++;
  m_str(m, "class");
  put_var(&m->tree, 2 + !!t->super + !!t->simple);
  m_attr(m, "name", t->name);
  m_attr_int(m, "id", t->id);
  if (t->super) m_attr(m, "superType", t->super);
  if (t->simple) m_attr(m, "simpleType", "true");
  put_var(&m->tree, (uint64_t)nf + !!t->label + !!t->category[0] + !!t->content_type);
  if (t->label) m_annotation(m, T_LABEL, t->label);
  if (t->content_type) m_annotation(m, T_CONTENTTYPE, NULL);
  if (t->category[0]) { /* a string array: value-0, value-1 */
    m_str(m, "annotation");
    put_var(&m->tree, 2 + !!t->category[1]);
    m_attr_int(m, "class", T_CATEGORY);
    m_attr(m, "value-0", t->category[0]);
    if (t->category[1]) m_attr(m, "value-1", t->category[1]);
    put_var(&m->tree, 0);
  }
  for (int i = 0; i < nf; i++) m_field(m, &t->fields[i]);
}

static void write_metadata(struct jfr_writer *w, int64_t ticks) {
  struct meta m = {0};
  size_t ntypes = sizeof TYPES / sizeof *TYPES;
  m_str(&m, "root");
  put_var(&m.tree, 0);
  put_var(&m.tree, 2);
  m_str(&m, "metadata");
  put_var(&m.tree, 0);
  put_var(&m.tree, ntypes);
  for (size_t i = 0; i < ntypes; i++) m_type(&m, &TYPES[i]);
  m_str(&m, "region");
  put_var(&m.tree, 2);
  m_attr(&m, "locale", "en_US");
  m_attr(&m, "gmtOffset", "0");
  put_var(&m.tree, 0);
  if (m.tree.oom || m.strings.keys.oom) fail(w, -ENOMEM);
  if (m.err) fail(w, m.err);

  event_begin(w, 0);
  put_var(&w->ev, (uint64_t)ticks);
  put_var(&w->ev, 0); /* duration */
  put_var(&w->ev, 1); /* metadata id */
  put_var(&w->ev, m.strings.n);
  for (uint32_t id = 1; id <= m.strings.n; id++) {
    uint32_t len;
    const uint8_t *s = pool_key(&m.strings, id, &len);
    put_str(&w->ev, (const char *)s, len);
  }
  put_bytes(&w->ev, m.tree.p, m.tree.len);
  if (!w->err) event_end(w);
  free(m.tree.p);
  pool_free(&m.strings);
}

int jfr_close(struct jfr_writer *w, int64_t end_ticks) {
  if (!w) return -EINVAL;
  struct checkpoint c = {.w = w, .ticks = end_ticks};
  write_pools(w, &c);
  free(c.entries.p);
  uint64_t cp = c.last, meta = w->pos;
  write_metadata(w, end_ticks);
  int64_t dt = end_ticks - w->clock.start_ticks;
  uint64_t duration =
      dt <= 0 ? 0 : (uint64_t)((long double)dt * 1e9L / (long double)w->clock.ticks_per_second);
  uint8_t h[HEADER_SIZE];
  header(w, h, cp, meta, duration, 1);
  if (!w->err) {
    uint64_t end = w->pos;
    if (fflush(w->f) != 0 || fseeko(w->f, w->base, SEEK_SET) != 0 ||
        fwrite(h, 1, sizeof h, w->f) != sizeof h ||
        fseeko(w->f, w->base + (off_t)end, SEEK_SET) != 0 || fflush(w->f) != 0)
      fail(w, -EIO);
  }
  int rc = w->err;
  jfr_abort(w);
  return rc;
}

void jfr_abort(struct jfr_writer *w) {
  if (!w) return;
  free(w->ev.p);
  pool_free(&w->symbols);
  pool_free(&w->packages);
  pool_free(&w->classes);
  pool_free(&w->methods);
  pool_free(&w->stacks);
  pool_free(&w->threads);
  pool_free(&w->tids);
  free(w->thread_key);
  free(w);
}

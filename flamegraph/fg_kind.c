/*
 * fg_kind.c — frame kinds: the rule that gives a frame name its kind, and the one definition
 * of what each kind looks like (the java palette's colours, the labels, the legend's keys).
 * The SVG writer draws with these tables and the HTML writer copies them into the page's data
 * (with each name's kind), so the page's script neither re-derives kinds nor holds colours.
 */
#include "fg_internal.h"

#include <string.h>

/* The java palette: a base colour per frame kind, plus up to `spread` (times a random number)
 * so that neighbours differ. async-profiler's colours where it has the kind (JIT green,
 * inlined aqua, C++ yellow, native C red, kernel orange); interpreted a pale lime, apart from
 * both JIT green and C++ yellow; pseudo-frames lavender; threads grey-blue; allocated classes
 * sky blue; lock classes magenta. Plain Java names
 * (native methods, or no kind recorded) share the JIT green. The legend shows base + spread / 2.
 * `label` is what a frame's details call its kind (the page's tooltip). */
const fg_kind_info fg_kinds[FG_KIND_COUNT] = {
    [FG_KIND_NATIVE] = {"native", "native (C)", "", {225, 90, 90}, {30, 40, 40}},
    [FG_KIND_JAVA] = {"java", "Java native method", "", {80, 215, 80}, {30, 30, 30}},
    [FG_KIND_JIT] = {"jit", "JIT-compiled", "_[j]", {80, 215, 80}, {30, 30, 30}},
    [FG_KIND_INLINED] = {"inlined", "inlined", "_[i]", {80, 200, 200}, {30, 30, 30}},
    [FG_KIND_INTERPRETED] = {"interpreted", "interpreted", "_[0]", {190, 225, 120}, {20, 20, 20}},
    [FG_KIND_KERNEL] = {"kernel", "kernel", "_[k]", {225, 125, 0}, {30, 30, 0}},
    [FG_KIND_SYNTHETIC] = {"pseudo", "pseudo-frame", "", {175, 150, 225}, {20, 20, 20}},
    [FG_KIND_CPP] = {"cpp", "C++", "", {205, 190, 50}, {30, 30, 10}},
    [FG_KIND_THREAD] = {"thread", "thread", "", {170, 178, 190}, {20, 20, 20}},
    [FG_KIND_ALLOC] = {"alloc", "allocated class", "_[a]", {90, 160, 235}, {25, 30, 20}},
    [FG_KIND_LOCK] = {"lock", "lock class", "_[l]", {215, 95, 160}, {25, 30, 25}},
};

/* The java palette's legend, in this order; kinds in one key share a colour. */
const fg_legend_key fg_legend[] = {
    {"jit", "Java (JIT)",
     "_[j] JIT-compiled Java; plain Java names: native methods, or no kind recorded",
     FG_KBIT(FG_KIND_JIT) | FG_KBIT(FG_KIND_JAVA)},
    {"inlined", "inlined", "_[i] Java inlined into its caller's compiled code",
     FG_KBIT(FG_KIND_INLINED)},
    {"interpreted", "interpreted", "_[0] interpreted Java", FG_KBIT(FG_KIND_INTERPRETED)},
    {"cpp", "C++ (JVM)", "C++ code: the JVM itself, or a C++ library", FG_KBIT(FG_KIND_CPP)},
    {"native", "native (C)", "C code and other native code: libc, JNI libraries, VM stubs",
     FG_KBIT(FG_KIND_NATIVE)},
    {"kernel", "kernel", "_[k] the operating system kernel", FG_KBIT(FG_KIND_KERNEL)},
    {"pseudo", "pseudo-frame", "[...] the JVM's or the profiler's state, not code",
     FG_KBIT(FG_KIND_SYNTHETIC)},
    {"thread", "thread", "[name tid=N] a thread (profiles taken with threads)",
     FG_KBIT(FG_KIND_THREAD)},
    {"alloc", "allocated class", "_[a] the class an allocation profile's stack allocated",
     FG_KBIT(FG_KIND_ALLOC)},
    {"lock", "lock class", "_[l] the class of the lock a lock profile's stack waited for",
     FG_KBIT(FG_KIND_LOCK)},
};
const size_t fg_legend_count = sizeof fg_legend / sizeof fg_legend[0];

static int has_suffix(const char *s, size_t len, const char *suf) {
  size_t k = strlen(suf);
  return len > k && memcmp(s + len - k, suf, k) == 0;
}

static const void *find_bytes(const char *s, size_t len, const char *what) {
  size_t k = strlen(what);
  for (size_t i = 0; i + k <= len; i++)
    if (memcmp(s + i, what, k) == 0) return s + i;
  return NULL;
}

/* See fg_internal.h. The rule (documented in the README of flamegraph/):
 *   suffix _[j] JIT, _[i] inlined, _[0] interpreted, _[k] kernel, _[a] allocated class,
 *   _[l] lock class (suffix not displayed);
 *   "[... tid=N]" a thread root, other "[...]" synthetic (the profiler's or the JVM's state);
 *   C++ when the name holds "::" or is a mangled "_Z" symbol;
 *   Java if the name is `pkg/Class.method` — does not start with '/', has a '.' after the
 *   last '/', no space before the first '/' or '.', no "::" — or dotted
 *   `pkg.Class.method` — two or more '.', starts with a letter, no space, no "::", no '/',
 *   no ".so";
 *   anything else native (C symbols, libraries, addresses). */
fg_kind fg_kind_of(const char *s, size_t len, size_t *display_len) {
  *display_len = len;
  if (len > 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']') {
    fg_kind k = FG_KIND_NATIVE;
    switch (s[len - 2]) {
    case 'j': k = FG_KIND_JIT; break;
    case 'i': k = FG_KIND_INLINED; break;
    case '0': k = FG_KIND_INTERPRETED; break;
    case 'k': k = FG_KIND_KERNEL; break;
    case 'a': k = FG_KIND_ALLOC; break;
    case 'l': k = FG_KIND_LOCK; break;
    default: break;
    }
    if (k != FG_KIND_NATIVE) {
      *display_len = len - 4;
      return k;
    }
  }
  if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
    size_t d = len - 1; /* "[name tid=123]": digits, then " tid=" */
    while (d > 1 && (unsigned)(s[d - 1] - '0') < 10u) d--;
    return d < len - 1 && d >= 6 && memcmp(s + d - 5, " tid=", 5) == 0 ? FG_KIND_THREAD
                                                                       : FG_KIND_SYNTHETIC;
  }
  if (find_bytes(s, len, "::") || (len > 2 && s[0] == '_' && s[1] == 'Z')) return FG_KIND_CPP;
  const char *slash = NULL;
  int dots = 0, space = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '/') slash = s + i;
    if (s[i] == '.') dots++;
    if (s[i] == ' ' && !slash && !dots) space = 1;
  }
  if (slash && s[0] != '/' && !space) {
    const char *dot = memchr(slash, '.', (size_t)(s + len - slash));
    if (dot && dot > slash + 1) return FG_KIND_JAVA;
    return FG_KIND_NATIVE;
  }
  /* GCC's clone suffixes (foo.isra.0, bar.cold) are native, not Class.method */
  static const char *const clones[] = {".isra",      ".part",     ".cold",
                                       ".constprop", ".lto_priv", ".localalias"};
  for (size_t i = 0; i < sizeof clones / sizeof *clones; i++)
    if (find_bytes(s, len, clones[i])) return FG_KIND_NATIVE;
  int ident = 1; /* letters, digits, _ $ . < > only: a Java class and method name */
  for (size_t i = 0; i < len && ident; i++) {
    unsigned char c = (unsigned char)s[i];
    ident = (unsigned)((c | 0x20) - 'a') < 26u || (unsigned)(c - '0') < 10u || c == '_' ||
            c == '$' || c == '.' || c == '<' || c == '>' || c >= 0x80;
  }
  if (!slash && dots >= 1 && ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z') && ident &&
      !find_bytes(s, len, ".so") && !has_suffix(s, len, "."))
    return FG_KIND_JAVA; /* com.example.Main.run, or Main.run in the default package */
  return FG_KIND_NATIVE;
}

/* A frame's kind by its id (flamegraph.h). */
const char *fg_frame_kind(const char *s, size_t n, size_t *display_len) {
  return fg_kinds[fg_kind_of(s, n, display_len)].id;
}

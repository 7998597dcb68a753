/*
 * symbols.c — names for native PCs (see symbols.h). Runs on the sampler thread, never in the
 * signal handler: it takes a mutex, allocates, opens files and calls into the loader.
 *
 * Objects
 *   The list of loaded objects is objects.c's (objects.h), the one the native walk reads: every
 *   call first brings it up to date with the loader's (objects_sync: the loader's load/unload
 *   counters, tens of ns when nothing changed), and when its generation moved, this module's
 *   objects are matched against it (objects_each). An object is kept across such a rebuild,
 *   with the symbols already read, only when its key is unchanged: load bias, path,
 *   st_dev/st_ino of the file and the GNU build-id of the image in memory. So an object
 *   unloaded and another loaded at the same address never share names. The objects'
 *   executable ranges, in the list's order, form the sorted array for the search.
 *
 * Symbols
 *   Read on the first pc that falls in the object, with libelf: .symtab and .dynsym of the
 *   file and, when the file has no .symtab (a stripped system library), the .symtab of its
 *   separate debug file — by build-id (<root>/.build-id/xx/rest.debug), else by .gnu_debuglink,
 *   accepted when its build-id (or, lacking one, the link's CRC) matches. A file whose build-id
 *   differs from the image's in memory (replaced on disk since it was loaded) is not used.
 *   Kept: STT_FUNC and STT_GNU_IFUNC symbols of a section, as [value, value + size). Values are
 *   ELF virtual addresses: pc - bias for ET_DYN, and for ET_EXEC too (its bias is 0). One
 *   symbol per address — of aliases the sized one, then the one with the fewest leading
 *   underscores ("getpid" over "__getpid"), global before weak before local, the shortest. A
 *   size-0 symbol covers up to the next symbol or the end of its section. Sorted by address,
 *   with a running maximum of the ends, so the innermost range containing a pc is found by a
 *   binary search and a walk back that stops as soon as nothing earlier can reach the pc.
 *
 * The string tables that hold the kept names are read whole into the object's memory (one
 * read each, no copy of the names after it), and the file is closed. The display form of a C++
 * name (demangled, parameter list cut) is made on its first lookup and kept beside the symbols.
 * An object's memory is freed when a rebuild finds it unloaded.
 */
#include "symbols.h"

#include <ctype.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diskcache.h"
#include "objects.h"
#include "platform.h"
#include "utf8.h"

#define BUILD_ID_MAX OBJECTS_BUILD_ID_MAX
#define UNKNOWN_NATIVE "[unknown native]"
#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define CHUNK_BYTES 4096

struct sym {
  uintptr_t addr, end; /* [addr, end) in the file's virtual addresses */
  uintptr_t maxend;    /* the greatest end of syms[0..i] */
  const char *name;    /* raw; its display form once the object's ready bit is set */
};

struct chunk { /* storage for display names */
  struct chunk *next;
  size_t used, cap;
  char data[];
};

struct obj {
  char *path;     /* the file to read; NULL when there is none (vDSO: read from memory) */
  char *name;     /* basename shown in "[name+0x...]" */
  uintptr_t bias; /* dlpi_addr: file virtual address + bias = run-time address */
  uintptr_t base; /* the lowest mapped address, as dladdr's dli_fbase */
  size_t image_size;
  bool vdso;
  bool stat_ok;
  dev_t dev;
  ino_t ino;
  unsigned char build_id[BUILD_ID_MAX];
  size_t build_id_len;
  bool read; /* symbols read (or the attempt failed: then nsyms is 0) */
  struct sym *syms;
  size_t nsyms;
  unsigned char *ready;  /* bit i: syms[i].name is its display form */
  struct chunk *strtabs; /* the string tables the raw names point into */
  struct chunk *display;
  size_t bytes; /* everything above */
};

struct range {
  uintptr_t lo, hi; /* executable code [lo, hi): the hull of the object's (objects.h) */
  struct obj *o;
};

static struct {
  pthread_mutex_t mu;
  uint64_t generation; /* of the objects' list (objects_generation) ours was matched to; 0: none */
  struct obj **objs;
  size_t nobjs;
  struct range *ranges; /* sorted by lo, disjoint */
  size_t nranges;
  char debug_root[PATH_MAX];
  struct symbols_stats st; /* the cumulative counters */
} sy = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- writing names ---- */

/* Copies s into buf as a name (utf8_name: ';' -> ':', control characters -> '?', bytes that are
 * not UTF-8 -> U+FFFD; cut between characters when it does not fit). */
static int put(char *buf, size_t len, const char *s) {
  int rc = utf8_name(s, strlen(s), buf, len);
  return rc < 0 ? rc : 0;
}

/* ---- demangling ---- */

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn demangler;
static atomic_int demangler_state; /* symbols_stats.demangler */

/* libjvm links libstdc++, so in a JVM the C++ runtime is there already; elsewhere it is loaded
 * (and stays loaded) when it is installed. */
static void find_demangler(void) {
  void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
  if (!f) {
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) h = dlopen("libstdc++.so.6", RTLD_LAZY);
    if (h) f = dlsym(h, "__cxa_demangle");
  }
  demangler = (cxa_demangle_fn)f;
  demangler_state = f ? 1 : -1;
}

static bool is_ident(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

static bool operator_at(const char *s, size_t i) {
  return strncmp(s + i, "operator", 8) == 0 && (i == 0 || !is_ident(s[i - 1])) &&
         !is_ident(s[i + 8]);
}

/* Turns a demangled name into the form flame graphs show, in place: "ns::Cls<T>::f(int) const
 * [clone .cold]" -> "ns::Cls<T>::f"; "void f<int>(int)" -> "f<int>". */
static void display_form(char *s) {
  /* The parameter list: the last ')' and its '(', when only qualifiers follow it. */
  char *close = strrchr(s, ')');
  if (close && !strpbrk(close + 1, ":<>()")) {
    int depth = 0;
    for (char *p = close;; p--) {
      if (*p == ')')
        depth++;
      else if (*p == '(' && --depth == 0) {
        if (p > s) *p = '\0';
        break;
      }
      if (p == s) break;
    }
  }
  /* A template function's return type: what precedes the last space outside brackets (and
   * before an "operator" keyword, whose name may hold '<', '>' and spaces). */
  size_t n = strlen(s), start = 0;
  if (n == 0 || s[n - 1] != '>') return;
  int depth = 0;
  for (size_t i = 0; s[i]; i++) {
    if (depth == 0 && operator_at(s, i)) break;
    if (strchr("<([{", s[i]))
      depth++;
    else if (strchr(">)]}", s[i])) {
      if (--depth < 0) return;
    } else if (s[i] == ' ' && depth == 0)
      start = i + 1;
  }
  if (start && s[start]) memmove(s, s + start, strlen(s + start) + 1);
}

/* The display form of a mangled C++ name (malloc'd), or NULL: not mangled, not demangled. */
static char *demangle(const char *raw) {
  if (raw[0] != '_' || raw[1] != 'Z') return NULL;
  pthread_once(&demangler_once, find_demangler);
  if (!demangler) return NULL;
  int status = 0;
  char *d = demangler(raw, NULL, NULL, &status);
  if (!d || status != 0) {
    free(d);
    return NULL;
  }
  display_form(d);
  return d;
}

int symbols_demangle(const char *raw, char *buf, size_t len) {
  if (!raw || !buf || !len) return -EINVAL;
  char *d = demangle(raw);
  int rc = put(buf, len, d ? d : raw);
  free(d);
  return rc;
}

/* ---- the list of objects (objects.h) ---- */

static void chunks_free(struct chunk *c) {
  for (struct chunk *next; c; c = next) {
    next = c->next;
    free(c);
  }
}

static void obj_free(struct obj *o) {
  if (!o) return;
  chunks_free(o->display);
  chunks_free(o->strtabs);
  free(o->syms);
  free(o->ready);
  free(o->path);
  free(o->name);
  free(o);
}

/* Where to read the loaded object `l` from and its identity on disk, as a new (unread)
 * object. */
static struct obj *obj_new(const struct object *l) {
  struct obj *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->bias = l->base;
  o->base = l->map_base;
  o->image_size = l->map_size;
  o->vdso = l->vdso;
  memcpy(o->build_id, l->build_id, l->build_id_len);
  o->build_id_len = l->build_id_len;
  const char *shown = l->name;
  char exe[PATH_MAX];
  if (!l->vdso && l->name[0]) {
    o->path = strdup(l->name);
  } else if (!l->vdso && l->program) { /* the main program's name is "" */
    o->path = strdup(plat_self_exe_path());
    shown = plat_self_exe_name(exe, sizeof exe) == 0 ? exe : "[exe]";
  }
  if (!shown[0]) shown = l->vdso ? "[vdso]" : "[anonymous]";
  const char *slash = strrchr(shown, '/');
  o->name = strdup(slash && slash[1] ? slash + 1 : shown);
  if (!o->name || (!l->vdso && (l->name[0] || l->program) && !o->path)) {
    obj_free(o);
    return NULL;
  }
  struct stat st;
  if (o->path && stat(o->path, &st) == 0) {
    o->stat_ok = true;
    o->dev = st.st_dev;
    o->ino = st.st_ino;
  }
  o->bytes = sizeof *o + strlen(o->name) + 1 + (o->path ? strlen(o->path) + 1 : 0);
  return o;
}

static bool obj_same(const struct obj *a, const struct obj *b) {
  return a->bias == b->bias && a->base == b->base && a->vdso == b->vdso &&
         a->stat_ok == b->stat_ok && (!a->stat_ok || (a->dev == b->dev && a->ino == b->ino)) &&
         (a->path && b->path ? strcmp(a->path, b->path) == 0 : a->path == b->path) &&
         a->build_id_len == b->build_id_len &&
         memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

/* The list being matched to objects.c's: ranges[i] is the i-th object's, in address order. */
struct rebuild {
  struct range *r;
  bool *fresh; /* r[i].o is new (freed when the rebuild fails) */
  size_t n, cap;
  bool *kept; /* sy.objs[j] is in the new list */
};

/* Adds loaded object l to the list being rebuilt: our object with the same key, or a new one.
 * Caller holds sy.mu (objects_each holds the objects' writer lock). */
static int rebuild_add(void *ctx, const struct object *l) {
  struct rebuild *rb = ctx;
  if (rb->n == rb->cap) {
    size_t cap = rb->cap ? 2 * rb->cap : 64;
    struct range *r = realloc(rb->r, cap * sizeof *r);
    if (r) rb->r = r;
    bool *f = realloc(rb->fresh, cap * sizeof *f);
    if (f) rb->fresh = f;
    if (!r || !f) return -ENOMEM;
    rb->cap = cap;
  }
  struct obj *o = obj_new(l);
  if (!o) return -ENOMEM;
  size_t j = 0;
  while (j < sy.nobjs && (rb->kept[j] || !obj_same(sy.objs[j], o))) j++;
  bool fresh = j == sy.nobjs;
  if (!fresh) {
    obj_free(o);
    rb->kept[j] = true;
    o = sy.objs[j];
  }
  rb->fresh[rb->n] = fresh;
  rb->r[rb->n++] = (struct range){.lo = l->text_start, .hi = l->text_end, .o = o};
  return 0;
}

/* Matches our objects to objects.c's list: the symbols of objects still loaded are kept, those
 * of objects gone are freed. Caller holds sy.mu. On failure the previous list stays. */
static int rebuild(void) {
  struct rebuild rb = {.kept = calloc(sy.nobjs ? sy.nobjs : 1, sizeof *rb.kept)};
  uint64_t generation = 0;
  int rc = rb.kept ? objects_each(&generation, rebuild_add, &rb) : -ENOMEM;
  struct obj **objs = rc ? NULL : malloc((rb.n ? rb.n : 1) * sizeof *objs);
  if (!objs) {
    for (size_t i = 0; i < rb.n; i++)
      if (rb.fresh[i]) obj_free(rb.r[i].o);
    free(rb.r);
    free(rb.fresh);
    free(rb.kept);
    return rc ? rc : -ENOMEM;
  }
  for (size_t i = 0; i < rb.n; i++) objs[i] = rb.r[i].o;
  for (size_t j = 0; j < sy.nobjs; j++)
    if (!rb.kept[j]) obj_free(sy.objs[j]);
  free(sy.objs);
  free(sy.ranges);
  sy.objs = objs;
  sy.nobjs = rb.n;
  sy.ranges = rb.r;
  sy.nranges = rb.n;
  sy.generation = generation;
  sy.st.refreshes++;
  free(rb.fresh);
  free(rb.kept);
  return 0;
}

/* Brings the list up to date with the loader's. Caller holds sy.mu. */
static int sync_list(void) {
  uint64_t generation;
  int rc = objects_sync(&generation);
  if (rc < 0) return rc;
  if (sy.generation && generation == sy.generation) return 0;
  return rebuild();
}

static const struct range *find_range(uintptr_t pc) {
  size_t lo = 0, hi = sy.nranges;
  while (lo < hi) { /* the first range with lo > pc */
    size_t mid = lo + (hi - lo) / 2;
    if (sy.ranges[mid].lo <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo && pc < sy.ranges[lo - 1].hi ? &sy.ranges[lo - 1] : NULL;
}

/* ---- reading symbol tables ---- */

struct efile {
  int fd;
  Elf *elf;
  void *image; /* a copy of an in-memory image (vDSO) */
  size_t image_size;
};

static void efile_close(struct efile *f) {
  if (f->elf) elf_end(f->elf);
  if (f->fd >= 0) close(f->fd);
  free(f->image);
  *f = (struct efile){.fd = -1};
}

static bool elf_usable(Elf *e) {
  GElf_Ehdr eh;
  if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) return false;
  if (gelf_getclass(e) != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)) return false;
  return eh.e_type == ET_DYN || eh.e_type == ET_EXEC;
}

/* Opens an ELF file. ELF_C_READ reads only the parts asked for, with pread: no mapping that a
 * file truncated under us could turn into SIGBUS. */
static int efile_open(struct efile *f, const char *path) {
  *f = (struct efile){.fd = open(path, O_RDONLY | O_CLOEXEC)};
  if (f->fd < 0) {
    int rc = -errno;
    f->fd = -1;
    return rc;
  }
  f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
  if (!f->elf || !elf_usable(f->elf)) {
    efile_close(f);
    return -ENOEXEC;
  }
  return 0;
}

/* Opens a copy of the ELF image mapped at base ([base, base + avail) is mapped): the vDSO,
 * whose image holds its section headers. */
static int efile_image(struct efile *f, uintptr_t base, size_t avail) {
  *f = (struct efile){.fd = -1};
  ElfW(Ehdr) eh;
  if (avail < sizeof eh) return -ENOEXEC;
  memcpy(&eh, (const void *)base, sizeof eh);
  size_t need = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || !eh.e_shoff || need > avail || need < eh.e_shoff)
    return -ENOEXEC;
  if (!(f->image = malloc(need))) return -ENOMEM;
  memcpy(f->image, (const void *)base, need);
  f->image_size = need;
  f->elf = elf_memory(f->image, need);
  if (!f->elf || !elf_usable(f->elf)) {
    efile_close(f);
    return -ENOEXEC;
  }
  return 0;
}

static size_t elf_build_id(Elf *e, unsigned char *out) {
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf) continue;
    GElf_Nhdr nh;
    size_t off = 0, next, name, desc;
    while ((next = gelf_getnote(d, off, &nh, &name, &desc)) > 0) {
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
          memcmp((char *)d->d_buf + name, "GNU", 4) == 0 && nh.n_descsz > 0 &&
          nh.n_descsz <= BUILD_ID_MAX) {
        memcpy(out, (char *)d->d_buf + desc, nh.n_descsz);
        return nh.n_descsz;
      }
      off = next;
    }
  }
  return 0;
}

static Elf_Scn *section_named(Elf *e, const char *want) {
  size_t shstrndx;
  if (elf_getshdrstrndx(e, &shstrndx) != 0) return NULL;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
    GElf_Shdr sh;
    const char *name;
    if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
        strcmp(name, want) == 0)
      return scn;
  }
  return NULL;
}

/* The CRC-32 .gnu_debuglink carries (zlib's: reflected 0xedb88320) of the whole file. */
static int file_crc32(int fd, uint32_t *out) {
  static uint32_t table[256];
  if (!table[1])
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  unsigned char buf[16384];
  uint32_t crc = 0xffffffffu;
  off_t off = 0;
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    for (ssize_t i = 0; i < n; i++) crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
    off += n;
  }
  *out = crc ^ 0xffffffffu;
  return 0;
}

/* Opens path as the debug file of o, not o's file itself. By build-id (!link): it must carry
 * o's build-id. By debuglink: o's build-id when both have one, else the link's CRC. */
static int try_debug(const char *path, const struct obj *o, bool link, uint32_t crc,
                     struct efile *out) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -ENOENT;
  if (o->stat_ok && st.st_dev == o->dev && st.st_ino == o->ino) return -ENOENT;
  int rc = efile_open(out, path);
  if (rc) return rc;
  unsigned char id[BUILD_ID_MAX];
  size_t n = elf_build_id(out->elf, id);
  uint32_t got;
  if (n && o->build_id_len) {
    if (n == o->build_id_len && memcmp(id, o->build_id, n) == 0) return 0;
  } else if (link && file_crc32(out->fd, &got) == 0 && got == crc) {
    return 0;
  }
  efile_close(out);
  return -ESTALE;
}

/* Finds and opens the separate debug file of o (whose file is e). */
static int open_debug(const struct obj *o, Elf *e, struct efile *out) {
  const char *root = sy.debug_root[0] ? sy.debug_root : DEFAULT_DEBUG_ROOT;
  char path[PATH_MAX];
  if (o->build_id_len >= 2) {
    int n = snprintf(path, sizeof path, "%s/.build-id/%02x/", root, o->build_id[0]);
    for (size_t i = 1; i < o->build_id_len && n > 0 && (size_t)n + 3 < sizeof path; i++)
      n += snprintf(path + n, sizeof path - (size_t)n, "%02x", o->build_id[i]);
    if (n > 0 && (size_t)n + 7 < sizeof path) {
      strcpy(path + n, ".debug");
      if (try_debug(path, o, false, 0, out) == 0) return 0;
    }
  }
  Elf_Scn *scn = o->path ? section_named(e, ".gnu_debuglink") : NULL;
  Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
  if (!d || !d->d_buf) return -ENOENT;
  const char *link = d->d_buf;
  size_t len = strnlen(link, d->d_size), crc_off = (len + 4) & ~(size_t)3;
  if (!len || crc_off + 4 > d->d_size || strchr(link, '/')) return -ENOENT;
  uint32_t crc;
  memcpy(&crc, (const char *)d->d_buf + crc_off, 4);
  char real[PATH_MAX];
  if (!realpath(o->path, real)) return -ENOENT;
  char *slash = strrchr(real, '/');
  if (!slash) return -ENOENT;
  *slash = '\0';
  int n = snprintf(path, sizeof path, "%s%s/%s", root, real, link);
  if (n > 0 && (size_t)n < sizeof path && try_debug(path, o, true, crc, out) == 0) return 0;
  n = snprintf(path, sizeof path, "%s/.debug/%s", real, link);
  if (n > 0 && (size_t)n < sizeof path && try_debug(path, o, true, crc, out) == 0) return 0;
  return -ENOENT;
}

struct cand { /* a symbol while the table is being built; name points into a string table */
  uintptr_t addr, end;
  const char *name; /* measured only where aliases are compared (cand_cmp): not for every one */
  unsigned char bind;
  bool sized;
  unsigned char tab; /* the string table's position in cands.tabs */
};

#define MAX_STRTABS 8 /* a file's .strtab and .dynstr, and its debug file's */

struct cands {
  struct cand *v;
  size_t n, cap;
  struct chunk *tabs[MAX_STRTABS]; /* read whole; data[used] is a NUL past the table's end */
  size_t ntabs;
};

/* Copies len bytes at off of section sh into out: pread from the file, or from the in-memory
 * image. Returns 0, or -1 when they lie outside the section or the file (shorter than its
 * headers say) or the read fails. */
static int section_bytes(const struct efile *f, const GElf_Shdr *sh, size_t off, void *out,
                         size_t len) {
  if (off > sh->sh_size || len > sh->sh_size - off) return -1;
  uint64_t at = sh->sh_offset + off;
  if (f->image) {
    if (at > f->image_size || len > f->image_size - at) return -1;
    memcpy(out, (const char *)f->image + at, len);
    return 0;
  }
  for (size_t got = 0; got < len;) {
    ssize_t r = pread(f->fd, (char *)out + got, len - got, (off_t)(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

/* Reads the string table of section index ndx into c->tabs, whole (pread from the file, or
 * copied from the in-memory image): libelf's own read would be followed by a copy of every name
 * kept (libjvm.so's 2.6 MB of names, a quarter of its symbols' read). Returns its position or
 * -1. */
static int strtab_read(const struct efile *f, size_t ndx, struct cands *c) {
  GElf_Shdr sh;
  Elf_Scn *scn = elf_getscn(f->elf, ndx);
  if (c->ntabs == MAX_STRTABS || !scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
      sh.sh_size >= SIZE_MAX - sizeof(struct chunk) - 1)
    return -1;
  size_t size = (size_t)sh.sh_size;
  struct chunk *t = malloc(sizeof *t + size + 1);
  if (!t) return -1;
  plat_prefault(t->data, size); /* written whole below */
  *t = (struct chunk){.used = size, .cap = size + 1};
  if (section_bytes(f, &sh, 0, t->data, size)) {
    free(t);
    return -1;
  }
  t->data[size] = '\0';
  c->tabs[c->ntabs] = t;
  return (int)c->ntabs++;
}

#define SYM_BATCH 256 /* symbols read at a time */

/* Adds the function symbols of f's .symtab and .dynsym to c; *has_symtab: f has a .symtab
 * with function symbols. The symbols are read in batches into a buffer on the stack, not whole
 * into memory of libelf's (1.4 MB of libjvm.so's, faulted in for one pass over it). */
static int collect(const struct efile *f, struct cands *c, bool *has_symtab) {
  Elf *e = f->elf;
  size_t shnum;
  if (elf_getshdrnum(e, &shnum) != 0) return -ENOEXEC;
  uintptr_t *send = calloc(shnum ? shnum : 1, sizeof *send); /* end of each allocated section */
  if (!send) return -ENOMEM;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
    GElf_Shdr sh;
    size_t i = elf_ndxscn(scn);
    if (i < shnum && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC))
      send[i] = sh.sh_addr + sh.sh_size;
  }
  int rc = 0;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
        sh.sh_entsize != sizeof(ElfW(Sym)))
      continue;
    size_t n = sh.sh_size / sh.sh_entsize, before = c->n;
    int tab = -1;
    if (c->cap - c->n < n) { /* room for all of them at once */
      struct cand *v = realloc(c->v, (c->n + n) * sizeof *v);
      if (!v) {
        rc = -ENOMEM;
        goto out;
      }
      c->v = v;
      c->cap = c->n + n;
      plat_prefault(v + c->n, n * sizeof *v); /* most of them are functions */
    }
    ElfW(Sym) batch[SYM_BATCH];
    for (size_t j = 1; j < n; j++) {
      if (j == 1 || j % SYM_BATCH == 0) {
        size_t from = j == 1 ? 0 : j, count = n - from < SYM_BATCH ? n - from : SYM_BATCH;
        if (section_bytes(f, &sh, from * sizeof *batch, batch, count * sizeof *batch)) break;
      }
      const ElfW(Sym) s = batch[j % SYM_BATCH];
      int type = GELF_ST_TYPE(s.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
          s.st_shndx >= SHN_LORESERVE || !s.st_value)
        continue;
      if (tab < 0 && (tab = strtab_read(f, sh.sh_link, c)) < 0) break;
      const struct chunk *strs = c->tabs[tab];
      if (s.st_name >= strs->used || !strs->data[s.st_name]) continue;
      const char *name = strs->data + s.st_name;
      uintptr_t end = s.st_value + s.st_size;
      if (!s.st_size)
        end =
            s.st_shndx < shnum && send[s.st_shndx] > s.st_value ? send[s.st_shndx] : s.st_value + 1;
      if (end < s.st_value) end = UINTPTR_MAX;
      c->v[c->n++] = (struct cand){.addr = s.st_value,
                                   .end = end,
                                   .name = name,
                                   .bind = (unsigned char)GELF_ST_BIND(s.st_info),
                                   .sized = s.st_size != 0,
                                   .tab = (unsigned char)tab};
    }
    if (sh.sh_type == SHT_SYMTAB && c->n > before) *has_symtab = true;
  }
out:
  free(send);
  return rc;
}

static int underscores(const char *s) {
  int n = 0;
  while (s[n] == '_') n++;
  return n;
}

static int bind_rank(unsigned char b) { return b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2; }

/* At one address, the preferred name first. */
static int cand_cmp(const struct cand *x, const struct cand *y) {
  if (x->sized != y->sized) return x->sized ? -1 : 1;
  int d = underscores(x->name) - underscores(y->name);
  if (!d) d = bind_rank(x->bind) - bind_rank(y->bind);
  if (!d) {
    size_t xl = strlen(x->name), yl = strlen(y->name);
    d = xl < yl ? -1 : xl > yl;
  }
  return d ? d : strcmp(x->name, y->name);
}

/* Sorts c by address (a radix sort: libjvm.so has ~48,000 function symbols, which qsort with a
 * comparator took ~20 ms to order, on the exit path of a JVM whose profile names them), and puts
 * the preferred of the symbols at one address (aliases: up to ~600 at one of libjvm.so's, code
 * folded by the linker) first, by cand_cmp. Returns 0 or -ENOMEM. */
static int sort_cands(struct cands *c) {
  size_t n = c->n;
  if (n < 2) return 0; /* in order, no aliases */
  struct cand *tmp = malloc(n * sizeof *tmp);
  if (!tmp) return -ENOMEM;
  plat_prefault(tmp, n * sizeof *tmp);
  struct cand *from = c->v, *to = tmp;
  enum { BYTES = sizeof(uintptr_t) };
  size_t count[BYTES][257]; /* every byte's counts in one pass: an object's addresses differ in
                               their low three bytes or so, and a pass per byte to find the
                               others all alike was most of the sort */
  memset(count, 0, sizeof count);
  for (size_t i = 0; i < n; i++)
    for (unsigned b = 0; b < BYTES; b++) count[b][((from[i].addr >> (8 * b)) & 0xff) + 1]++;
  for (unsigned b = 0; b < BYTES; b++) {
    unsigned shift = 8 * b;
    size_t *cnt = count[b];
    if (cnt[((from[0].addr >> shift) & 0xff) + 1] == n) continue; /* one byte value: in order */
    for (int v = 0; v < 256; v++) cnt[v + 1] += cnt[v];
    for (size_t i = 0; i < n; i++) to[cnt[(from[i].addr >> shift) & 0xff]++] = from[i];
    struct cand *swap = from;
    from = to, to = swap;
  }
  if (from != c->v) memcpy(c->v, from, n * sizeof *from);
  free(tmp);
  for (size_t i = 0, j; i < n; i = j) { /* each address's run: the preferred name first */
    size_t best = i;
    for (j = i + 1; j < n && c->v[j].addr == c->v[i].addr; j++)
      if (cand_cmp(&c->v[j], &c->v[best]) < 0) best = j;
    struct cand first = c->v[i];
    c->v[i] = c->v[best];
    c->v[best] = first;
  }
  return 0;
}

/* Turns the candidates into o's table: one symbol per address, ends settled; the string tables
 * that hold a kept name move to o, the others stay in c. */
static int finish(struct obj *o, struct cands *c) {
  int rc = sort_cands(c);
  if (rc) return rc;
  size_t k = 0;
  for (size_t i = 0; i < c->n; i++)
    if (i == 0 || c->v[i].addr != c->v[i - 1].addr) k++;
  if (!k) return 0;
  o->syms = malloc(k * sizeof *o->syms);
  o->ready = calloc((k + 7) / 8, 1);
  if (!o->syms || !o->ready) {
    free(o->syms);
    free(o->ready);
    o->syms = NULL, o->ready = NULL;
    return -ENOMEM;
  }
  plat_prefault(o->syms, k * sizeof *o->syms);
  bool used[MAX_STRTABS] = {false};
  uintptr_t maxend = 0;
  for (size_t i = 0, n = 0; i < c->n; n++) {
    const struct cand *best = &c->v[i];
    uintptr_t end = best->end;
    size_t j = i + 1;
    for (; j < c->n && c->v[j].addr == best->addr; j++)
      if (c->v[j].sized && c->v[j].end > end) end = c->v[j].end; /* aliases of another size */
    if (!best->sized && j < c->n && c->v[j].addr < end) end = c->v[j].addr;
    if (end > maxend) maxend = end;
    o->syms[n] = (struct sym){best->addr, end, maxend, best->name};
    used[best->tab] = true;
    i = j;
  }
  for (size_t t = 0; t < c->ntabs; t++)
    if (used[t]) {
      c->tabs[t]->next = o->strtabs;
      o->strtabs = c->tabs[t];
      o->bytes += sizeof *c->tabs[t] + c->tabs[t]->cap;
      c->tabs[t] = NULL;
    }
  o->nsyms = k;
  o->bytes += k * sizeof *o->syms + (k + 7) / 8;
  return 0;
}

/* ---- the symbols kept on disk (diskcache.h) ---- */

/* An object's entry: the counts, then its symbols as struct sym with the name an offset into
 * the names that follow (only the kept ones, one after the other: not the whole string tables
 * they were read from). Made only of symbols read from the object's own .symtab, never a debug
 * file's (one installed later would be missed) nor .dynsym alone. */
struct sym_pre {
  uint64_t nsyms, names_bytes;
};

struct sym_room {
  struct sym *syms;
  struct chunk *names;
};

static int sym_room(void *ctx, const void *pre, size_t rest, struct iovec out[2]) {
  const struct sym_pre *p = pre;
  struct sym_room *r = ctx;
  if (!p->nsyms || !p->names_bytes || p->nsyms > rest / sizeof(struct sym) ||
      p->nsyms * sizeof(struct sym) + p->names_bytes != rest)
    return 0;
  size_t n = (size_t)p->nsyms, bytes = (size_t)p->names_bytes;
  r->syms = malloc(n * sizeof *r->syms);
  r->names = malloc(sizeof *r->names + bytes);
  if (!r->syms || !r->names) return 0;
  *r->names = (struct chunk){.used = bytes, .cap = bytes};
  out[0] = (struct iovec){r->syms, n * sizeof *r->syms};
  out[1] = (struct iovec){r->names->data, bytes};
  return 2;
}

/* The key of o's entry (agent: this agent's build-id, alen its length). */
static struct diskcache_key sym_key(const struct obj *o, const unsigned char *agent, size_t alen) {
  return (struct diskcache_key){.id = o->build_id,
                                .id_len = o->build_id_len,
                                .agent = agent,
                                .agent_len = alen,
                                .k = {1 /* the object's own .symtab */, o->image_size}};
}

/* o's symbols from the disk cache: 0, or -1 (none kept, or refused: o is left as it was).
 * Every name offset is checked to lie inside the names, which end with a NUL, and the
 * addresses to rise (sym_find's search); the running maximum of the ends is made again. */
static int sym_load(struct obj *o) {
  unsigned char agent[OBJECTS_BUILD_ID_MAX];
  size_t alen = objects_agent_id(agent);
  struct diskcache_key k = sym_key(o, agent, alen);
  struct sym_pre pre;
  struct sym_room r = {0};
  int ok = 0;
  if (!alen || diskcache_load(DISKCACHE_SYMBOLS, &k, &pre, sizeof pre, sym_room, &r)) goto out;
  size_t n = (size_t)pre.nsyms, bytes = r.names->used;
  ok = r.names->data[bytes - 1] == '\0';
  uintptr_t maxend = 0;
  for (size_t i = 0; i < n && ok; i++) {
    uintptr_t off = (uintptr_t)r.syms[i].name;
    ok = off < bytes && (!i || r.syms[i].addr > r.syms[i - 1].addr);
    if (r.syms[i].end > maxend) maxend = r.syms[i].end;
    r.syms[i].maxend = maxend;
    r.syms[i].name = r.names->data + off;
  }
  diskcache_took(DISKCACHE_SYMBOLS, ok);
  if (ok && !(o->ready = calloc((n + 7) / 8, 1))) ok = 0;
  if (ok) {
    o->syms = r.syms, o->nsyms = n;
    r.names->next = o->strtabs;
    o->strtabs = r.names;
    o->bytes += n * sizeof *o->syms + (n + 7) / 8 + sizeof *r.names + bytes;
    return 0;
  }
out:
  free(r.syms);
  free(r.names);
  return -1;
}

/* Keeps o's symbols (just read: their names raw) on disk. */
static void sym_store(const struct obj *o) {
  unsigned char agent[OBJECTS_BUILD_ID_MAX];
  size_t alen = objects_agent_id(agent), bytes = 0;
  if (!alen || !o->nsyms) return;
  for (size_t i = 0; i < o->nsyms; i++) bytes += strlen(o->syms[i].name) + 1;
  struct sym *recs = malloc(o->nsyms * sizeof *recs);
  char *names = malloc(bytes);
  if (recs && names) {
    for (size_t i = 0, at = 0; i < o->nsyms; i++) {
      size_t len = strlen(o->syms[i].name) + 1;
      memcpy(names + at, o->syms[i].name, len);
      recs[i] = o->syms[i];
      recs[i].name = (const char *)at; /* an offset on disk */
      at += len;
    }
    struct sym_pre pre = {o->nsyms, bytes};
    struct iovec parts[3] = {{&pre, sizeof pre}, {recs, o->nsyms * sizeof *recs}, {names, bytes}};
    struct diskcache_key k = sym_key(o, agent, alen);
    diskcache_store(DISKCACHE_SYMBOLS, &k, parts, 3);
  }
  free(recs);
  free(names);
}

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static void elf_setup(void) { elf_version(EV_CURRENT); }

/* Reads o's symbols; on failure o keeps none (its pcs get "[name+0x...]"). Caller holds sy.mu. */
static void obj_read(struct obj *o) {
  uint64_t t0 = now_ns();
  struct efile f = {.fd = -1}, dbg = {.fd = -1};
  struct cands c = {0};
  bool has_symtab = false, unused;
  int rc;
  o->read = true;
  bool cacheable = !o->vdso && o->path && o->build_id_len;
  if (cacheable && !sym_load(o)) {
    sy.st.read_ns += now_ns() - t0;
    return;
  }
  pthread_once(&elf_once, elf_setup);
  if (o->vdso)
    rc = efile_image(&f, o->base, o->image_size);
  else
    rc = o->path ? efile_open(&f, o->path) : -ENOENT;
  if (rc) goto out;
  unsigned char id[BUILD_ID_MAX];
  size_t n = o->build_id_len ? elf_build_id(f.elf, id) : 0;
  if (n && (n != o->build_id_len || memcmp(id, o->build_id, n) != 0)) {
    rc = -ESTALE; /* the file on disk is not the one loaded */
    goto out;
  }
  if ((rc = collect(&f, &c, &has_symtab))) goto out;
  if (!has_symtab && !o->vdso && open_debug(o, f.elf, &dbg) == 0) {
    sy.st.debug_files++;
    if ((rc = collect(&dbg, &c, &unused))) goto out;
  }
  rc = finish(o, &c);
  if (!rc && cacheable && has_symtab) sym_store(o);
out:
  if (rc) sy.st.read_failed++;
  free(c.v);
  for (size_t t = 0; t < c.ntabs; t++) free(c.tabs[t]);
  efile_close(&dbg);
  efile_close(&f);
  sy.st.read_ns += now_ns() - t0;
}

/* The symbol of o covering file address a, or -1. */
static ptrdiff_t sym_find(const struct obj *o, uintptr_t a) {
  size_t lo = 0, hi = o->nsyms;
  while (lo < hi) { /* the first symbol with addr > a */
    size_t mid = lo + (hi - lo) / 2;
    if (o->syms[mid].addr <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i-- > 0;) {
    if (a < o->syms[i].end) return (ptrdiff_t)i;
    if (o->syms[i].maxend <= a) break; /* nothing at or before i reaches a */
  }
  return -1;
}

static char *chunk_dup(struct obj *o, const char *s) {
  size_t n = strlen(s) + 1;
  struct chunk *c = o->display;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
    if (!(c = malloc(sizeof *c + cap))) return NULL;
    *c = (struct chunk){.next = o->display, .cap = cap};
    o->display = c;
    o->bytes += sizeof *c + cap;
  }
  char *p = c->data + c->used;
  memcpy(p, s, n);
  c->used += n;
  return p;
}

static const char *sym_display(struct obj *o, size_t i) {
  if (o->ready[i / 8] & (1u << (i % 8))) return o->syms[i].name;
  char *d = demangle(o->syms[i].name);
  if (d) {
    char *copy = chunk_dup(o, d);
    free(d);
    if (!copy) return o->syms[i].name; /* out of memory: the raw name this time */
    o->syms[i].name = copy;
  }
  o->ready[i / 8] |= (unsigned char)(1u << (i % 8));
  return o->syms[i].name;
}

/* ---- the API ---- */

int symbols_name(uintptr_t pc, char *buf, size_t len) {
  if (!buf || !len) return -EINVAL;
  pthread_mutex_lock(&sy.mu);
  sy.st.lookups++;
  sync_list(); /* on -ENOMEM: the previous list */
  const struct range *r = find_range(pc);
  int rc;
  if (!r) {
    sy.st.miss_object++;
    put(buf, len, UNKNOWN_NATIVE);
    rc = -ENOENT;
    goto out;
  }
  struct obj *o = r->o;
  if (!o->read) obj_read(o);
  ptrdiff_t i = sym_find(o, pc - o->bias);
  if (i >= 0) {
    rc = put(buf, len, sym_display(o, (size_t)i));
  } else {
    char tmp[NAME_MAX + 32];
    sy.st.miss_symbol++;
    snprintf(tmp, sizeof tmp, "[%.*s+0x%" PRIxPTR "]", NAME_MAX, o->name, pc - o->base);
    rc = put(buf, len, tmp);
  }
out:
  pthread_mutex_unlock(&sy.mu);
  return rc;
}

int symbols_refresh(void) {
  pthread_mutex_lock(&sy.mu);
  int rc = sync_list();
  pthread_mutex_unlock(&sy.mu);
  return rc;
}

void symbols_fini(void) {
  pthread_mutex_lock(&sy.mu);
  for (size_t i = 0; i < sy.nobjs; i++) obj_free(sy.objs[i]);
  free(sy.objs);
  free(sy.ranges);
  sy.objs = NULL;
  sy.ranges = NULL;
  sy.nobjs = sy.nranges = 0;
  sy.generation = 0;
  sy.debug_root[0] = '\0';
  memset(&sy.st, 0, sizeof sy.st);
  pthread_mutex_unlock(&sy.mu);
}

int symbols_set_debug_root(const char *dir) {
  if (!dir || dir[0] != '/') return -EINVAL;
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n >= sizeof sy.debug_root) return -ENAMETOOLONG;
  pthread_mutex_lock(&sy.mu);
  memcpy(sy.debug_root, dir, n);
  sy.debug_root[n] = '\0';
  pthread_mutex_unlock(&sy.mu);
  return 0;
}

void symbols_stats(struct symbols_stats *out) {
  pthread_mutex_lock(&sy.mu);
  *out = sy.st;
  out->objects = sy.nobjs;
  out->bytes = sy.nobjs * sizeof *sy.objs + sy.nranges * sizeof *sy.ranges;
  for (size_t i = 0; i < sy.nobjs; i++) {
    const struct obj *o = sy.objs[i];
    out->objects_read += o->read;
    out->symbols += o->nsyms;
    out->bytes += o->bytes;
  }
  out->demangler = demangler_state;
  pthread_mutex_unlock(&sy.mu);
}

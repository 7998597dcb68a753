/*
 * symbols.h — names for native code addresses: the loaded object (executable, libjvm.so, libc,
 * JNI libraries, the vDSO) that contains a PC and the function symbol that covers it, read from
 * the objects' ELF symbol tables (and their separate debug files) with libelf.
 *
 * Off the signal path: the native stack walk in the handler records raw PCs; the sampler thread
 * names them here. Everything may allocate, read files and wait on the module's one mutex; none
 * of it is async-signal-safe. Functions return 0 or a negative errno-style code.
 */
#ifndef SAMPLER_SYMBOLS_H
#define SAMPLER_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* Writes the name of the native code at pc into buf (NUL-terminated):
 *  - the function's name, C++ names demangled without their parameter list
 *    ("os::javaTimeNanos", "G1ParScanThreadState::trim_queue", "deflate");
 *  - "[libfoo.so+0x1234]" when the object is known but no symbol covers pc (the object's
 *    basename and pc's offset from its load base — dladdr's dli_fbase — in lowercase hex);
 *  - "[unknown native]" when no loaded object has executable code at pc.
 * A name is UTF-8 (utf8.h: bytes of a symbol or file name that are not become U+FFFD) and never
 * contains ';' (written ':') or control characters (written '?').
 * Returns 0, -ENOENT ("[unknown native]" written), -ENOSPC (the name was cut to fit, on a
 * UTF-8 character boundary) or -EINVAL (buf NULL or len 0). The object list is the loaded
 * objects' table (objects.h), brought up to date with the loader's (its load/unload counters:
 * tens of ns) on every call, so a name is never that of an object unloaded before the call. An
 * object's symbol table is read on the first PC that falls in it (milliseconds for a large
 * library), under the module's mutex.
 * Thread-safe; not signal-safe. */
int symbols_name(uintptr_t pc, char *buf, size_t len);

/* Brings the object list up to date with the loader's: objects unloaded since (dlclose) are
 * dropped with their symbols, new ones are noticed (their symbols are read lazily). Cheap when
 * nothing was loaded or unloaded. Returns 0 or -ENOMEM (the previous list is then kept).
 * Thread-safe; not signal-safe. */
int symbols_refresh(void);

/* Frees every cached object and symbol table and resets the counters and the debug root: the
 * module starts afresh on its next use. Thread-safe; not signal-safe. */
void symbols_fini(void);

/* Sets the root of the separate debug file tree (default "/usr/lib/debug"): debug files are
 * looked up as <root>/.build-id/<xx>/<rest>.debug by GNU build-id and as
 * <root>/<dir of object>/<debuglink> by .gnu_debuglink (also <dir of object>/.debug/<debuglink>).
 * Applies to objects whose symbols are read after the call. Returns 0, -EINVAL (not an absolute
 * path) or -ENAMETOOLONG. Thread-safe; not signal-safe. */
int symbols_set_debug_root(const char *dir);

/* Writes the display form of a raw symbol name into buf: "_Z..." names demangled with the C++
 * runtime's __cxa_demangle (found with dlsym; the raw name when it is unavailable or the name
 * does not demangle) without the top-level parameter list, trailing qualifiers (" const") or the
 * return type of template functions — template arguments kept; ';' and control characters
 * replaced as in symbols_name. Returns 0 or -ENOSPC (cut) or -EINVAL. Thread-safe; not
 * signal-safe (allocates). */
int symbols_demangle(const char *raw, char *buf, size_t len);

struct symbols_stats {
  uint64_t objects;      /* loaded objects known now */
  uint64_t objects_read; /* of those, with their symbol tables read */
  uint64_t symbols;      /* function symbols held now (all objects) */
  uint64_t bytes;        /* memory held for objects and symbols now */
  uint64_t debug_files;  /* separate debug files read (since start) */
  uint64_t read_failed;  /* objects whose file could not be read or did not match the image */
  uint64_t read_ns;      /* wall time spent reading symbol tables (since start) */
  uint64_t refreshes;    /* object list rebuilds (the loaded objects' list changed) */
  uint64_t lookups;      /* symbols_name calls */
  uint64_t miss_object;  /* ... whose pc was in no loaded object */
  uint64_t miss_symbol;  /* ... whose pc was in an object but no symbol covered it */
  int demangler;         /* 1: __cxa_demangle found; 0: not looked for yet; -1: unavailable */
};

/* Fills *out with one consistent snapshot. Thread-safe; not signal-safe. */
void symbols_stats(struct symbols_stats *out);

#endif

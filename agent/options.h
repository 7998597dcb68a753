/*
 * options.h — the agent's options: `-agentlib:sampler=opt=value,opt=value,...`.
 * Parsed once, at load; a bad option is an error that names the option and what it accepts.
 * Every option is defined once, in options.c's table; the parser, the `help` text and the
 * README's options table come from it.
 */
#ifndef SAMPLER_OPTIONS_H
#define SAMPLER_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define OPT_FILE_MAX 4096 /* bytes of a file= path, its end included */

enum opt_format {
  FORMAT_FOLDED = 0,
  FORMAT_TEXT,
  FORMAT_SVG,
  FORMAT_HTML,
  FORMAT_PPROF,
  FORMAT_JFR
};
/* What a folded count is: samples, CPU ns, or (set by the parser) bytes (event=alloc) or ns
 * blocked (event=lock). */
enum opt_weight { WEIGHT_SAMPLES = 0, WEIGHT_CPU, WEIGHT_BYTES, WEIGHT_BLOCKED };

struct agent_options {
  uint64_t interval_ns;            /* interval=     default 10ms */
  char file_pattern[OPT_FILE_MAX]; /* file= as given (default sampler-%p.<ext of format>) */
  char file[OPT_FILE_MAX];         /* file_pattern with %p, %t (now) and %n (0) expanded */
  int format;     /* format=       default from the file's extension, else folded */
  int depth;      /* depth=        default 1024 */
  int threads;    /* threads       default off */
  int lines;      /* lines         default off: frames carry their source line */
  int ann;        /* ann           frames carry their kind _[j] _[i] _[0]; default on for
                                          svg and html, off for folded and text */
  int codemap;    /* codemap       default on: the compiled-code map (recovery, kinds) */
  int hasrun;     /* hasrun=       auto | cpu | regs (enum sampler_hasrun) */
  int cstack;     /* cstack=       dwarf (1, default) | no (0): native frames */
  int jvmthreads; /* jvmthreads    default on: the JVM's own threads too */
  int sig;        /* signal=       default SIGRTMIN+4 */
  int cputimers;  /* cputimers     default on: busy threads' samples by CPU-time timers */
  char sig_name[32];
  uint64_t duration_ns;  /* duration=     default 0: until the JVM exits */
  int weight;            /* weight=       samples | cpu */
  uint64_t loop_ns;      /* loop=         default 0: one profile */
  size_t timeline_bytes; /* timeline=     default 32m: the time axis's memory */
  /* event= a set of: cpu or wall (clock; wall says which), alloc, lock */
  int clock;                /* event=cpu|wall  the rounds' samples (default: cpu) */
  int wall;                 /* event=wall    cpu (0, default) | wall (1) */
  int alloc;                /* event=alloc   allocations: alone, weight is then WEIGHT_BYTES */
  uint64_t alloc_bytes;     /* alloc=        mean bytes between allocation samples, 512k */
  int lock;                 /* event=lock    lock waits: alone, weight is then WEIGHT_BLOCKED */
  uint64_t lock_ns;         /* lock=         threshold of the waits all recorded, 10us */
  char reply[OPT_FILE_MAX]; /* reply=   where answers go besides stderr; "" none */
  char stats[OPT_FILE_MAX]; /* stats=   the counters as JSON, %p and %t expanded; "" none */
  char cache[OPT_FILE_MAX]; /* cache=   the unwind tables' directory; "" none (off, or no
                                        home to put the default in) */
  int cache_given;          /* cache= was given (a directory that fails is then an error) */
  int help;                 /* help */
};

/* Parses `s` (may be NULL or empty: all defaults) into o, expanding %p (pid) and %t
 * (start time) in file=. Returns 0; -EINVAL for bad input, or -ENOMEM; on error, a message
 * for the user is in err (no newline; it names the option and what is accepted). Thread-safe
 * (no shared state); not signal-safe (it allocates). */
int opt_parse(const char *s, struct agent_options *o, char *err, size_t errlen);

/* The events o records: bit 1 << enum sampler_event (sampler/types.h) for each. Pure. */
unsigned opt_events(const struct agent_options *o);

/* The name of event kind ev (enum sampler_event): "cpu", "wall", "alloc", "lock"; "?" else.
 * Thread-safe, signal-safe. */
const char *opt_event_name(int ev);

/* The names of the events in `events` (opt_events's bits), in the enum's order, joined by sep
 * ("cpu,alloc"), into buf. Thread-safe; not signal-safe. */
void opt_event_names(unsigned events, const char *sep, char *buf, size_t len);

/* Sets *one to o as it would be with event=<ev> alone (its weight that event's: o's for cpu and
 * wall, bytes for alloc, ns blocked for lock): what a single-event writer is given for the part
 * of a several-event run of kind ev. Pure. */
void opt_for_event(const struct agent_options *o, int ev, struct agent_options *one);

/* Whether the path (or pattern) p has %e, the event's name: one file per event. Pure. */
int opt_names_events(const char *p);

/* Commands an attach can give before its options ("stop", "dump,file=x.svg"); options
 * without one are a start. */
enum opt_command { OPT_CMD_START = 0, OPT_CMD_STOP, OPT_CMD_DUMP, OPT_CMD_STATUS };

/* The command s begins with (a first word start, stop, dump or status; else OPT_CMD_START),
 * and in *rest what follows it. Thread-safe, signal-safe. */
int opt_command(const char *s, const char **rest);

/* Sets file= to v on o as the parser would: expanded, and the format from its extension if it
 * has a known one. Returns 0 or -EINVAL with the reason in err. */
int opt_set_file(struct agent_options *o, const char *v, char *err, size_t errlen);

/* The name of chunk seq of a `loop`, begun at time t: o->file_pattern with %n = seq and %t = t.
 * Returns 0 or -ENAMETOOLONG. */
int opt_chunk_file(const struct agent_options *o, uint64_t seq, time_t t, char *out, size_t len);

/* The text `-agentlib:sampler=help` prints: every option, its values, default and help,
 * made from the option table on the first call. Thread-safe; not signal-safe. */
const char *opt_help(void);

/* Writes the options table in markdown, as README.md carries it under "Using the agent":
 * the header `| option | values | default |`, its rule, one row per option in the table's
 * order. Returns 0, or -EIO if out reports an error. Thread-safe as stdio is. */
int opt_markdown_table(FILE *out);

/* Writes " s |" to out: s as one cell of a markdown table row, its | escaped (they would end
 * the cell); an empty cell is " |". For the tables made from code (options, counters).
 * Thread-safe as stdio is. */
void opt_markdown_cell(FILE *out, const char *s);

/* The name of the i-th option in the table's order ("interval", "file", ...), NULL past the
 * last. Thread-safe, signal-safe. */
const char *opt_name(size_t i);

/* "folded", "text", "svg", "html" or "pprof" ("?" for anything else). Thread-safe, signal-safe. */
const char *opt_format_name(int format);

/* Formats ns as the shortest exact "10ms"/"250us"/"2s"/"1500ns". Thread-safe; not
 * signal-safe (snprintf). */
void opt_format_duration(uint64_t ns, char *buf, size_t len);

#endif

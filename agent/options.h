/*
 * options.h — the agent's options: `-agentlib:sampler=opt=value,opt=value,...`.
 * Parsed once, at load; a bad option is an error that names the option and what it accepts.
 */
#ifndef SAMPLER_OPTIONS_H
#define SAMPLER_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum opt_format { FORMAT_FOLDED = 0, FORMAT_TEXT, FORMAT_SVG, FORMAT_HTML };
enum opt_weight { WEIGHT_SAMPLES = 0, WEIGHT_CPU };

struct agent_options {
  uint64_t interval_ns;  /* interval=     default 10ms */
  char file[4096];       /* file=         default sampler-%p.<ext of format>, %p %t expanded */
  int format;            /* format=       default from the file's extension, else folded */
  int depth;             /* depth=        default 1024 */
  int threads;           /* threads       default off */
  int lines;             /* lines         default off: frames carry their source line */
  int ann;               /* ann           frames carry their kind _[j] _[i] _[0]; default on for
                                          svg and html, off for folded and text */
  int codemap;           /* codemap       default on: the compiled-code map (recovery, kinds) */
  int hasrun;            /* hasrun=       auto | cpu | regs (enum sampler_hasrun) */
  int sig;               /* signal=       default SIGRTMIN+4 */
  char sig_name[32];
  uint64_t duration_ns;  /* duration=     default 0: until the JVM exits */
  int weight;            /* weight=       samples | cpu */
  int help;              /* help */
};

/* Parses `s` (may be NULL or empty: all defaults) into o, expanding %p (pid) and %t
 * (start time) in file=. Returns 0, or -1 with a message for the user in err (no newline;
 * it names the option and what is accepted). Not signal-safe. */
int opt_parse(const char *s, struct agent_options *o, char *err, size_t errlen);

/* The text `-agentlib:sampler=help` prints: every option, its values and default. */
const char *opt_help(void);

/* "folded", "text", "svg" or "html". */
const char *opt_format_name(int format);

/* Formats ns as the shortest exact "10ms"/"250us"/"2s"/"1500ns". */
void opt_format_duration(uint64_t ns, char *buf, size_t len);

#endif

/*
 * commands.c — the attach command protocol: jcmd JVMTI.agent_load (or the `sampler` launcher)
 * calls Agent_OnAttach with "[command,]options"; the first attach loads the agent
 * (lifecycle.c), later ones start (with other options), stop, dump or ask the status. One
 * command at a time, under ctl; what the agent says while answering goes to stderr and to the
 * command's reply= file (say()).
 *
 * Hazards: the JVM's exit waits for ctl, so nothing done under it may block on the outside
 * world: the reply file is opened without blocking, and only a regular file is written; what a
 * command says on stderr is kept in memory and written after ctl is let go, and no write on
 * stderr waits long for room (a pipe that nobody reads; stderr_write).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jvmti.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_internal.h"
#include "counters.h"
#include "options.h"
#include "output.h"
#include "platform.h"
#include "sampler.h"

/* What the command being answered on this thread says on stderr, kept until ctl is let go
 * (Agent_OnAttach), or NULL; and whether it says nothing there (a status with a reply file: a
 * query changes nothing the program's log should record, and the answer is long). */
static __thread FILE *held;
static __thread bool reply_only;

/* Messages (and their bytes) that stderr_write could not write since the last one it could. */
static _Atomic uint64_t dropped_msgs, dropped_bytes;

/* Writes n bytes on fd 2; returns how many of them found no room (0: all written). Each piece
 * of at most PIPE_BUF bytes waits up to a second for room. */
static size_t write_or_drop(const char *p, size_t n) {
  while (n) {
    struct pollfd pfd = {.fd = STDERR_FILENO, .events = POLLOUT};
    int r = poll(&pfd, 1, 1000);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || !(pfd.revents & POLLOUT)) return n; /* no room, closed or an error */
    ssize_t w = write(STDERR_FILENO, p, n < PIPE_BUF ? n : PIPE_BUF);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return n;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Writes n bytes of messages on the JVM's stderr without ever blocking for long: a pipe that
 * nobody reads (a parent that reads only after the exit) would hold the writer for good — at
 * the JVM's exit too. What finds no room is dropped and counted, and the next write that finds
 * room says first how much was not shown. */
static void stderr_write(const char *p, size_t n) {
  uint64_t msgs = atomic_exchange(&dropped_msgs, 0), bytes = atomic_exchange(&dropped_bytes, 0);
  if (msgs) {
    char note[160];
    int len = snprintf(note, sizeof note,
                       "sampler: %" PRIu64 " message%s (%" PRIu64 " bytes) not shown here: "
                       "stderr had no room for a second\n",
                       msgs, msgs == 1 ? "" : "s", bytes);
    if (write_or_drop(note, (size_t)len)) { /* still none: counted again, with this one */
      atomic_fetch_add(&dropped_msgs, msgs + 1);
      atomic_fetch_add(&dropped_bytes, bytes + n);
      return;
    }
  }
  size_t left = write_or_drop(p, n);
  if (left) {
    atomic_fetch_add(&dropped_msgs, 1);
    atomic_fetch_add(&dropped_bytes, left);
  }
}

/* Says something to the user: on the JVM's stderr (for a command, once ctl is let go), and in
 * the reply file of the command being answered. */
void say(const char *fmt, ...) {
  va_list ap;
  if (!(reply_only && agent.reply)) {
    if (held) {
      va_start(ap, fmt);
      fprintf(held, "sampler: ");
      vfprintf(held, fmt, ap);
      fputc('\n', held);
      va_end(ap);
    } else {
      char line[1024], *text = line;
      va_start(ap, fmt);
      int n = vsnprintf(line + 9, sizeof line - 10, fmt, ap); /* after "sampler: " */
      va_end(ap);
      if (n < 0) n = 0;
      if ((size_t)n >= sizeof line - 10) { /* longer: a buffer of its size */
        text = malloc((size_t)n + 11);
        va_start(ap, fmt);
        if (text) vsnprintf(text + 9, (size_t)n + 1, fmt, ap);
        va_end(ap);
      }
      if (text) {
        memcpy(text, "sampler: ", 9);
        text[9 + n] = '\n';
        stderr_write(text, (size_t)n + 10);
        if (text != line) free(text);
      }
    }
  }
  if (agent.reply && held) {
    va_start(ap, fmt);
    vfprintf(agent.reply, fmt, ap);
    fputc('\n', agent.reply);
    fflush(agent.reply);
    va_end(ap);
  }
}

/* Opens the reply file at path for appending, or returns NULL with errno set. Only a regular
 * file is written: a symbolic link is not followed (ELOOP), and a FIFO or a device is refused
 * (EINVAL) — opened without blocking (a FIFO without a reader would hold ctl, which the JVM's
 * exit waits for). A new file is the JVM user's alone (0600). */
static FILE *open_reply_file(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return NULL;
  struct stat st;
  int e = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
  if (e) {
    close(fd);
    errno = e;
    return NULL;
  }
  FILE *f = fdopen(fd, "a");
  if (!f) {
    e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

/* Opens the reply= file named in `rest` (options of a command), if any: what say() says goes
 * there too (appended). One that cannot be written is said on stderr. */
static void open_reply(const char *rest) {
  for (const char *p = rest; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 6 && !strncmp(p, "reply=", 6) && len - 6 < OPT_FILE_MAX) {
      char path[OPT_FILE_MAX];
      snprintf(path, sizeof path, "%.*s", (int)(len - 6), p + 6);
      agent.reply = open_reply_file(path);
      if (!agent.reply)
        say("reply=%s: not written (%s): the answer is on stderr only", path,
            errno == EINVAL ? "not a regular file" : strerror(errno));
      return;
    }
    p = end ? end + 1 : NULL;
  }
}

static void close_reply(void) {
  if (agent.reply) fclose(agent.reply);
  agent.reply = NULL;
}

/* The options of stop and dump: file= (the format from its extension) and reply=. */
static int parse_output_options(const char *rest, struct agent_options *o) {
  char copy[2 * OPT_FILE_MAX + 64], err[OPT_FILE_MAX + 128];
  if (strlen(rest) >= sizeof copy) {
    say("%s", "options too long");
    return -EINVAL;
  }
  strcpy(copy, rest);
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strncmp(tok, "reply=", 6)) continue;
    if (strncmp(tok, "file=", 5) != 0) {
      say("'%s': stop and dump take file=PATH (and reply=PATH) only", tok);
      return -EINVAL;
    }
    if (opt_set_file(o, tok + 5, err, sizeof err)) {
      say("%s", err);
      return -EINVAL;
    }
  }
  return 0;
}

/* What `status` answers. ctl held. */
static void status(void) {
  char ival[32], loop[32];
  opt_format_duration(agent.opt.interval_ns, ival, sizeof ival);
  if (agent.state != RUNNING) {
    if (agent.state == STOPPED && agent.last_file[0])
      say("stopped; the last profile was written to %s", agent.last_file);
    else
      say("%s", agent.state == STOPPED ? "stopped" : "not profiling");
    return;
  }
  struct sampler_report r;
  sampler_report(&r);
  char since[64];
  struct tm tm;
  strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", localtime_r(&agent.started, &tm));
  say("running since %s (%.0f s), interval %s, format %s", since,
      difftime(time(NULL), agent.started), ival, opt_format_name(agent.opt.format));
  char path[OPT_FILE_MAX];
  pthread_mutex_lock(&agent.cut_lock);
  chunks_current_file(path, sizeof path);
  uint64_t seq = agent.chunk_seq;
  pthread_mutex_unlock(&agent.cut_lock);
  if (agent.opt.loop_ns) {
    opt_format_duration(agent.opt.loop_ns, loop, sizeof loop);
    say("loop %s: chunk %" PRIu64 " going to %s", loop, seq, path);
  } else {
    say("output %s", path);
  }
  say("samples %" PRIu64 " (captures %" PRIu64 ") in %zu stacks; threads %d; coverage %.1f%% of "
      "the process's CPU",
      r.n.units, r.n.samples, r.stacks, r.threads_live, r.coverage_permille / 10.0);
  say("tables %.1f MB (%zu stacks, %zu names, %zu cached frame keys)",
      (double)r.table_bytes / 1048576.0, r.stacks, r.names, r.keys);
  char *all = NULL; /* every counter, as the text report and stats= have them */
  size_t all_len = 0;
  FILE *m = open_memstream(&all, &all_len);
  if (m) {
    int rc = counters_text(m, &r);
    if (fclose(m) == 0 && rc == 0) {
      while (all_len && all[all_len - 1] == '\n') all[--all_len] = '\0';
      say("%s", all);
    }
    free(all);
  }
  size_t used, kept;
  if (plat_malloc_stats(&used, &kept) == 0)
    say("malloc %.1f MB in use, %.1f MB kept free (the whole process: the JVM's and the agent's)",
        (double)used / 1048576.0, (double)kept / 1048576.0);
}

/* A start on a loaded agent: the options of the new run. What sampler_init fixed (the signal,
 * depth, codemap) cannot change. ctl held. */
static int restart(const char *rest) {
  struct agent_options o;
  char err[OPT_FILE_MAX + 256];
  int rc = opt_parse(rest, &o, err, sizeof err);
  if (!rc && o.help) {
    say("%s", "help: see -agentlib:sampler=help, or `sampler help`");
    return -EINVAL;
  }
  if (rc) {
    say("%s", err);
    return rc;
  }
  if (o.sig != agent.opt.sig || o.depth != agent.opt.depth || o.codemap != agent.opt.codemap) {
    say("%s=: fixed when the agent was loaded (%s); a new start cannot change it",
        o.sig != agent.opt.sig       ? "signal"
        : o.depth != agent.opt.depth ? "depth"
                                     : "codemap",
        o.sig != agent.opt.sig       ? agent.opt.sig_name
        : o.depth != agent.opt.depth ? "depth given then"
                                     : (agent.opt.codemap ? "codemap=on" : "codemap=off"));
    return -EINVAL;
  }
  rc = output_check_writable(&o, err, sizeof err);
  if (rc) {
    say("%s", err);
    return rc;
  }
  struct sampler_config sc = agent_config_of(&o);
  rc = sampler_configure(&sc);
  if (rc) {
    say("cannot start: %s", rc == -EBUSY ? "the last run has not ended yet" : strerror(-rc));
    return rc;
  }
  JNIEnv *jni = NULL;
  if ((*agent.vm)->GetEnv(agent.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) return -EINVAL;
  struct agent_options old = agent.opt;
  agent.opt = o;
  sampler_clear();
  rc = agent_begin_run(agent.jvmti, jni);
  if (rc) agent.opt = old;
  return rc;
}

/* One command on a loaded agent. ctl held. Returns 0 or a negative errno-style code. */
static int command(int cmd, const char *rest) {
  if (atomic_load(&agent.dead)) return -ESRCH;
  switch (cmd) {
  case OPT_CMD_START:
    if (agent.state == RUNNING) {
      say("already running (since %.0f s, output %s): stop it first",
          difftime(time(NULL), agent.started), agent.opt.file);
      return -EBUSY;
    }
    if (restart(rest)) return -EINVAL;
    say("started; the profile goes to %s%s", agent.opt.file,
        agent.opt.loop_ns ? " (the first chunk)" : "");
    return 0;
  case OPT_CMD_STOP: {
    if (agent.state != RUNNING) {
      say("%s", "not running: nothing to stop");
      return -ESRCH;
    }
    struct agent_options o = agent.opt;
    if (parse_output_options(rest, &o)) return -EINVAL;
    if (strcmp(o.file, agent.opt.file) != 0) { /* stop,file=: the last profile goes there */
      agent.opt.format = o.format;
      strcpy(agent.opt.file, o.file);
      strcpy(agent.opt.file_pattern, o.file_pattern);
      agent.opt.loop_ns = 0; /* then chunks_current_file() is the file given */
    }
    agent_finish_run("stop");
    return 0;
  }
  case OPT_CMD_DUMP: {
    if (agent.state == NOT_STARTED) {
      say("%s", "not profiling: nothing to dump");
      return -ESRCH;
    }
    struct agent_options o = agent.opt, saved = agent.opt;
    if (parse_output_options(rest, &o)) return -EINVAL;
    char path[OPT_FILE_MAX];
    pthread_mutex_lock(&agent.cut_lock);
    if (strcmp(o.file, agent.opt.file) != 0)
      snprintf(path, sizeof path, "%s", o.file);
    else
      chunks_current_file(path, sizeof path);
    agent.opt.format = o.format;
    if (agent.state == RUNNING) {
      uint64_t now = plat_mono_ns();
      sampler_mark(SAMPLER_MARK_DUMP, now, now);
    }
    int rc = chunks_write(path, 0, 0, "dump");
    agent.opt = saved;
    pthread_mutex_unlock(&agent.cut_lock);
    if (rc == 0)
      say("profile %s written to %s", agent.state == RUNNING ? "so far" : "of the last run", path);
    return rc;
  }
  case OPT_CMD_STATUS:
    reply_only = true;
    status();
    reply_only = false;
    return 0;
  }
  return -EINVAL;
}

/* jcmd <pid> JVMTI.agent_load /path/to/libsampler.so "[command,]options" (or the `sampler`
 * launcher, through jattach): the first attach loads the agent and starts sampling with the
 * options; later ones give commands — start (with other options), stop, dump, status. */
EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved) {
  (void)reserved;
  const char *rest = NULL;
  int cmd = opt_command(options, &rest);
  char *text = NULL; /* what is said on stderr meanwhile */
  size_t text_len = 0;
  held = open_memstream(&text, &text_len); /* NULL (no memory): said on stderr at once */
  pthread_mutex_lock(&agent.ctl);
  open_reply(rest);
  int rc;
  if (agent.jvmti && agent.state != NOT_STARTED) {
    rc = command(cmd, rest);
  } else if (cmd != OPT_CMD_START) {
    say("%s", cmd == OPT_CMD_STATUS ? "not profiling" : "not profiling: nothing to stop or dump");
    rc = cmd == OPT_CMD_STATUS ? 0 : -ESRCH;
  } else {
    rc = agent_first_attach(vm, rest);
  }
  close_reply();
  pthread_mutex_unlock(&agent.ctl);
  if (held) {
    FILE *f = held;
    held = NULL;
    if (fclose(f) == 0 && text_len) stderr_write(text, text_len);
    free(text);
  }
  return rc == 0 ? JNI_OK : JNI_ERR;
}

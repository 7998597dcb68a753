/*
 * platform/linux.c — the Linux primitives of the sampler thread and of set-up (see
 * platform.h): directed signals with a value, other threads' CPU clocks and scheduler state,
 * futexes, the thread list and stacks, checked memory reads. None of this runs in the signal
 * handler (that part is linux_signal.c); functions documented signal-safe here are so only
 * because they are single system calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

int plat_signal_thread(pid_t tid, int sig, int value) {
  /* two system calls a signal saved: a process's pid and uid do not change (a forked child
   * has no sampler thread to send signals) */
  static pid_t pid;
  static uid_t uid;
  int e = errno;
  if (!pid) {
    uid = getuid();
    pid = getpid();
  }
  siginfo_t si;
  memset(&si, 0, sizeof si);
  si.si_signo = sig;
  si.si_code = SI_QUEUE;
  si.si_pid = pid;
  si.si_uid = uid;
  si.si_value.sival_int = value;
  int rc = syscall(SYS_rt_tgsigqueueinfo, si.si_pid, tid, sig, &si) == 0 ? 0 : -errno;
  errno = e;
  return rc;
}

/* Timers are made with the system calls themselves: glibc's timer_t wraps the kernel's id,
 * and its SIGEV_THREAD_ID support needs nothing of glibc's. */
int plat_cpu_timer_create(pid_t tid, int sig, int value, int *timer) {
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = sig;
  ev.sigev_value.sival_int = value;
  ev._sigev_un._tid = tid;
  clockid_t clock = (clockid_t)(((unsigned)~tid << 3) | 6); /* as in plat_thread_cpu_ns */
  int e = errno, id = -1;
  int rc = syscall(SYS_timer_create, clock, &ev, &id) == 0 ? 0 : -errno;
  errno = e;
  if (!rc) *timer = id;
  return rc;
}

int plat_cpu_timer_arm(int timer, int once) {
  struct itimerspec its = {{0, 0}, {0, once ? 1 : 0}}; /* 1 ns of the thread's CPU from now */
  int e = errno;
  int rc = syscall(SYS_timer_settime, timer, 0, &its, NULL) == 0 ? 0 : -errno;
  errno = e;
  return rc;
}

void plat_cpu_timer_delete(int timer) {
  int e = errno;
  syscall(SYS_timer_delete, timer);
  errno = e;
}

uint64_t plat_tick_ns(void) {
  struct timespec res;
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) return 0;
  return (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
}

uint64_t plat_last_tick_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int plat_thread_cpu_ns(pid_t tid, uint64_t *ns) {
  /* the clock id glibc's pthread_getcpuclockid builds: CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED */
  clockid_t id = (clockid_t)(((unsigned)~tid << 3) | 6);
  struct timespec ts;
  int e = errno;
  if (clock_gettime(id, &ts) != 0) {
    int rc = -errno;
    errno = e;
    return rc;
  }
  *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  return 0;
}

/* plat_thread_running's descriptors, kept open between calls: a pread of a kept
 * /proc/self/task/<tid>/stat costs ~2.6 us here, of its wchan file ~1.5 us for a blocked
 * thread (~0.7 us for a running one), an open + read + close ~9 us; and the sampler asks
 * about the same threads round after round while it waits to catch them running.
 * Direct-mapped by tid (tids are handed out in sequence), at most RUNNING_FDS entries of two
 * descriptors, fewer when the descriptor limit is low: at most 1/16 of it, none below 1,024,
 * and moved above 1,024 when the limit allows, where they take no number select() could use.
 * A kept descriptor names its task, not a number: once that thread has ended its reads fail
 * with ESRCH, even when the tid has been given to another thread. Caller: one thread at a
 * time. */
#define RUNNING_FDS 512
enum { TASK_WCHAN, TASK_STAT };
static struct {
  pid_t tid;
  int fd[2]; /* by enum TASK_*; 0: none (descriptor 0 is never ours to keep) */
} running_fd[RUNNING_FDS];
static int running_cap = -1; /* entries in use; -1: not yet sized */
static int running_floor;    /* lowest descriptor number to keep one at */

/* The wchan file names the kernel function a blocked thread waits in, and says "0" for one
 * that is running or runnable — but also for one that blocked and is still on its run queue
 * (the scheduler's delayed dequeue, Linux 6.12 on: for a thread here that wakes every 5 ms
 * for ~20 us beside a busy one, ~3 in 4 of its "0"s came with an S in its stat, see
 * bench/procstate.c; believed, they quadrupled the samples that found server threads in a
 * wait), or that the kernel cannot name. So a name is taken as "blocked", and a "0" is
 * asked again of the stat file, whose state letter is the thread's own. A kernel that has
 * said "0" for WCHAN_PROBES blocked threads and never named a wait is asked through stat
 * alone. */
#define WCHAN_PROBES 256
static int wchan_named; /* 1: wchan has named a wait; -1: gave up on it */
static int wchan_zeros; /* its "0"s for blocked threads before it named a wait */

static void running_size(void) {
  struct rlimit rl;
  running_cap = 0;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 1024) return;
  rlim_t cap = rl.rlim_cur / 32;
  running_cap = cap > RUNNING_FDS ? RUNNING_FDS : (int)cap;
  running_floor = rl.rlim_cur >= 1024 + 8 * (rlim_t)running_cap ? 1024 : 0;
}

static void running_close(int k) {
  for (int f = 0; f < 2; f++)
    if (running_fd[k].fd[f] > 0) {
      close(running_fd[k].fd[f]);
      running_fd[k].fd[f] = 0;
    }
}

/* Reads the state letter from a stat file's text: 1 running or runnable, 0 not, -EPROTO. */
static int stat_running(const char *buf) {
  const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
  if (!paren || paren[1] != ' ' || !paren[2]) return -EPROTO;
  return paren[2] == 'R';
}

/* Reads /proc/self/task/<tid>/<file> into buf (cap bytes, NUL-terminated), through entry k's
 * kept descriptor (k -1: none) when the entry is that thread's; else opens it and keeps it
 * there, the entry given to this thread. Returns its length, or -errno (-ENOENT, -ESRCH: the
 * thread has ended). */
static ssize_t read_task_file(pid_t tid, int file, int k, char *buf, size_t cap) {
  ssize_t n;
  if (k >= 0 && running_fd[k].tid == tid && running_fd[k].fd[file] > 0) {
    n = pread(running_fd[k].fd[file], buf, cap - 1, 0);
    if (n > 0) {
      buf[n] = '\0';
      return n;
    }
    running_close(k); /* that thread has ended: a new one may have its tid */
  }
  snprintf(buf, cap, "/proc/self/task/%d/%s", (int)tid, file == TASK_WCHAN ? "wchan" : "stat");
  int fd = open(buf, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  n = read(fd, buf, cap - 1);
  n = n < 0 ? -errno : n == 0 ? -ESRCH : n;
  if (n > 0) buf[n] = '\0';
  if (n > 0 && k >= 0) { /* keep it, in place of the entry's thread */
    int kept = running_floor ? fcntl(fd, F_DUPFD_CLOEXEC, running_floor) : fd;
    if (kept != fd) close(fd);
    fd = kept;
    if (fd > 0) {
      if (running_fd[k].tid != tid) running_close(k);
      if (running_fd[k].fd[file] > 0) close(running_fd[k].fd[file]);
      running_fd[k].tid = tid;
      running_fd[k].fd[file] = fd;
      fd = -1;
    }
  }
  if (fd >= 0) close(fd);
  return n;
}

int plat_thread_running(pid_t tid) {
  char buf[512];
  int e = errno, rc;
  if (running_cap < 0) running_size();
  int k = running_cap > 0 ? (int)((unsigned)tid % (unsigned)running_cap) : -1;
  ssize_t n;
  if (wchan_named >= 0) {
    n = read_task_file(tid, TASK_WCHAN, k, buf, sizeof buf);
    if (n > 0 && !(n == 1 && buf[0] == '0')) {
      wchan_named = 1; /* where it waits: blocked */
      errno = e;
      return 0;
    }
    if (n == -EACCES || n == -EPERM) {
      wchan_named = -1; /* not ours to read: stat alone */
    } else if (n < 0) {
      errno = e;
      return (int)n; /* gone */
    }
  }
  int zero = wchan_named >= 0;
  n = read_task_file(tid, TASK_STAT, k, buf, sizeof buf);
  rc = n < 0 ? (int)n : stat_running(buf);
  if (zero && rc == 0 && !wchan_named && ++wchan_zeros >= WCHAN_PROBES)
    wchan_named = -1; /* "0" for blocked threads, never a name: no names here */
  errno = e;
  return rc;
}

const char *plat_thread_running_source(void) {
  return wchan_named > 0 ? "wchan, stat" : wchan_named == 0 ? "stat (wchan not yet known)" : "stat";
}

/* The signal mask in the status line `key` ("SigBlk:\t0000000000000000" ...) of text: 0 and the
 * mask, or -EPROTO. */
static int status_mask(const char *text, const char *key, uint64_t *mask) {
  const char *at = strstr(text, key);
  if (!at) return -EPROTO;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(at + strlen(key), &end, 16);
  if (errno || end == at + strlen(key)) return -EPROTO;
  *mask = (uint64_t)v;
  return 0;
}

int plat_thread_signal_state(pid_t tid, int sig) {
  char buf[4096]; /* the whole file: ~1.5 KB */
  if (sig < 1 || sig > 64) return -EINVAL;
  snprintf(buf, sizeof buf, "/proc/self/task/%d/status", (int)tid);
  int e = errno;
  int fd = open(buf, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int rc = -errno;
    errno = e;
    return rc;
  }
  ssize_t n = read(fd, buf, sizeof buf - 1);
  int rc = n < 0 ? -errno : n == 0 ? -ESRCH : 0;
  close(fd);
  uint64_t pending = 0, blocked = 0;
  if (!rc) {
    buf[n] = '\0';
    rc = status_mask(buf, "\nSigPnd:", &pending);
    if (!rc) rc = status_mask(buf, "\nSigBlk:", &blocked);
  }
  errno = e;
  if (rc) return rc;
  uint64_t bit = 1ull << (sig - 1);
  return (blocked & bit ? PLAT_SIG_BLOCKED : 0) | (pending & bit ? PLAT_SIG_PENDING : 0);
}

void plat_release_free_memory(void) {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

int plat_malloc_stats(size_t *in_use, size_t *kept_free) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  struct mallinfo2 mi = mallinfo2();
  *in_use = mi.uordblks + mi.hblkhd; /* blocks in the arenas, blocks mapped on their own */
  *kept_free = mi.fordblks;
  return 0;
#else
  *in_use = *kept_free = 0;
  return -ENOSYS;
#endif
}

#define BLOCK_MAPPED (64u << 10)

static size_t block_pages(size_t len) {
  static size_t page;
  if (!page) {
    long pg = sysconf(_SC_PAGESIZE);
    page = pg > 0 ? (size_t)pg : 4096;
  }
  return (len + page - 1) & ~(page - 1);
}

void *plat_block_resize(void *p, size_t old_len, size_t new_len) {
  if (!p) old_len = 0;
  if (new_len < BLOCK_MAPPED && old_len < BLOCK_MAPPED) return realloc(p, new_len);
  if (new_len >= BLOCK_MAPPED && old_len >= BLOCK_MAPPED) {
    void *q = mremap(p, block_pages(old_len), block_pages(new_len), MREMAP_MAYMOVE);
    return q == MAP_FAILED ? NULL : q;
  }
  void *q;
  if (new_len >= BLOCK_MAPPED) {
    q = mmap(NULL, block_pages(new_len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
             0);
    if (q == MAP_FAILED) return NULL;
  } else if (!(q = malloc(new_len))) {
    return NULL;
  }
  if (p) {
    memcpy(q, p, old_len < new_len ? old_len : new_len);
    plat_block_free(p, old_len);
  }
  return q;
}

void plat_block_free(void *p, size_t len) {
  if (!p) return;
  if (len >= BLOCK_MAPPED)
    munmap(p, block_pages(len));
  else
    free(p);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

void plat_prefault(void *p, size_t len) {
  if (!p || len < BLOCK_MAPPED) return;
  uintptr_t start = (uintptr_t)block_pages((uintptr_t)p); /* the first page boundary in it */
  uintptr_t end = ((uintptr_t)p + len) & ~(uintptr_t)(block_pages(1) - 1);
  if (end > start) madvise((void *)start, end - start, MADV_POPULATE_WRITE); /* EINVAL: older */
}

void plat_thread_running_release(void) {
  for (int k = 0; k < RUNNING_FDS; k++) running_close(k);
}

int plat_thread_running_kept(void) {
  int n = 0;
  for (int k = 0; k < RUNNING_FDS; k++) n += (running_fd[k].fd[0] > 0) + (running_fd[k].fd[1] > 0);
  return n;
}

int plat_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_ns) {
  struct timespec ts = {(time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull)};
  int e = errno;
  long r = syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, timeout_ns ? &ts : NULL, NULL, 0);
  int rc = r == 0 ? 0 : -errno;
  errno = e;
  return rc == -EAGAIN ? 0 : rc;
}

void plat_futex_wake(const uint32_t *addr, int n) {
  int e = errno;
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
  errno = e;
}

int plat_set_timer_slack_ns(unsigned long ns) {
  return prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) == 0 ? 0 : -errno;
}

int plat_self_stack(uintptr_t *lo, uintptr_t *hi) {
  pthread_attr_t attr;
  void *base = NULL;
  size_t size = 0;
  int rc = pthread_getattr_np(pthread_self(), &attr);
  if (rc) return -rc;
  rc = pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  if (rc) return -rc;
  if (!base || !size) return -ENOENT;
  *lo = (uintptr_t)base;
  *hi = (uintptr_t)base + size;
  return 0;
}

int plat_foreach_thread(int (*fn)(void *ctx, pid_t tid), void *ctx) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -errno;
  struct dirent *e;
  int rc = 0;
  while (!rc && (e = readdir(d))) {
    pid_t tid = (pid_t)atoi(e->d_name);
    if (tid > 0) rc = fn(ctx, tid);
  }
  closedir(d);
  return rc;
}

int plat_thread_count(void) {
  static int fd = -1; /* kept: the sampler thread asks every ~50 ms */
  if (fd < 0) {
    int f = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (f < 0) return -errno;
    fd = f;
  }
  /* the kernel counts the directory's links as 2 + the threads (proc_task_getattr) */
  struct stat st;
  if (fstat(fd, &st) != 0) return -errno;
  return st.st_nlink >= 3 ? (int)(st.st_nlink - 2) : -ENOENT;
}

int plat_thread_name(pid_t tid, char *buf, size_t len) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char name[32];
  ssize_t n = read(fd, name, sizeof name - 1);
  int e = errno;
  close(fd);
  if (n < 0) return -e;
  name[n] = '\0';
  name[strcspn(name, "\n")] = '\0';
  snprintf(buf, len, "%s", name);
  return 0;
}

int plat_mapping_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi) {
  FILE *f = fopen("/proc/self/maps", "re");
  if (!f) return -errno;
  char line[512];
  int rc = -ENOENT;
  while (fgets(line, sizeof line, f)) {
    unsigned long a, b;
    if (sscanf(line, "%lx-%lx", &a, &b) == 2 && addr >= a && addr < b) {
      *lo = (uintptr_t)a;
      *hi = (uintptr_t)b;
      rc = 0;
      break;
    }
    if (!strchr(line, '\n')) { /* a very long path: skip the rest of the line */
      int ch;
      while ((ch = fgetc(f)) != EOF && ch != '\n') {}
    }
  }
  fclose(f);
  return rc;
}

unsigned plat_umask(void) {
  /* umask() itself sets the mask: reading it that way races with other threads */
  FILE *f = fopen("/proc/self/status", "re");
  unsigned mask = 022;
  char line[128];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Umask: %o", &mask) == 1) break;
  if (f) fclose(f);
  return mask & 0777;
}

const char *plat_self_exe_path(void) { return "/proc/self/exe"; }

int plat_self_exe_name(char *buf, size_t len) {
  if (!len) return -EINVAL;
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  buf[n > 0 ? n : 0] = '\0';
  return n > 0 ? 0 : -errno;
}

int plat_read_memory(uintptr_t addr, void *buf, size_t len) {
  struct iovec local = {buf, len}, remote = {(void *)addr, len};
  int e = errno;
  ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  int rc = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
  errno = e;
  return rc;
}

int plat_write_memory(uintptr_t addr, const void *buf, size_t len) {
  struct iovec local = {(void *)(uintptr_t)buf, len}, remote = {(void *)addr, len};
  int e = errno;
  ssize_t n = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
  int rc = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
  errno = e;
  return rc;
}

#define READ_EACH_BATCH 64 /* regions per process_vm_readv (the kernel takes up to 1024) */

int plat_read_memory_each(const uintptr_t *addrs, size_t len, int n, void *buf, unsigned char *ok) {
  int e = errno, done = 0, whole = 0;
  memset(ok, 0, n > 0 ? (size_t)n : 0);
  /* a region that fails ends the call's transfer there (the kernel stops at the first region
   * it cannot read whole): it is left 0 and the next call begins after it */
  while (len && done < n) {
    struct iovec local[READ_EACH_BATCH], remote[READ_EACH_BATCH];
    int k = n - done < READ_EACH_BATCH ? n - done : READ_EACH_BATCH;
    for (int i = 0; i < k; i++) {
      local[i] = (struct iovec){(char *)buf + (size_t)(done + i) * len, len};
      remote[i] = (struct iovec){(void *)addrs[done + i], len};
    }
    ssize_t got = process_vm_readv(getpid(), local, (unsigned long)k, remote, (unsigned long)k, 0);
    if (got < 0 && errno != EFAULT) {
      if (!whole && done == 0) whole = -errno;
      break;
    }
    int full = got < 0 ? 0 : (int)((size_t)got / len);
    for (int i = 0; i < full; i++) ok[done + i] = 1;
    whole += full;
    done += full < k ? full + 1 : k; /* the region that stopped it is not retried */
  }
  errno = e;
  return whole;
}

/*
 * commit.c — a file written whole or not at all (see commit.h): the profile and the stats file
 * go through it. Runs on whichever thread writes; the one shared state,
 * unnamed_unusable, is set only by the probe at start, before any writer runs.
 */
#include "commit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"

static int unnamed_unusable; /* set when linking an unnamed file failed for want of /proc */

static void dir_of(const char *path, char *dir, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, len, ".");
  else if (slash == path)
    snprintf(dir, len, "/");
  else
    snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* Opens the file written for `path` (commit.h). Returns 0 or a negative errno. */
int commit_open(const char *path, struct commit_file *o) {
  if (strlen(path) + 16 >= sizeof o->tmp) return -ENAMETOOLONG;
  int fd = -1;
  if (!unnamed_unusable) {
    char dir[sizeof o->tmp];
    dir_of(path, dir, sizeof dir);
    fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666); /* the umask applies, as to any */
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return -errno;
  }
  o->unnamed = fd >= 0;
  if (!o->unnamed) {
    snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", path);
    fd = mkstemp(o->tmp);
    if (fd < 0) return -errno;
    fchmod(fd, 0666 & ~plat_umask()); /* as any file the program creates (mkstemp makes 0600) */
  }
  o->f = fdopen(fd, "w");
  if (!o->f) {
    int e = errno;
    close(fd);
    if (!o->unnamed) unlink(o->tmp);
    return -e;
  }
  return 0;
}

/* Links the unnamed file fd to a name beside path that nobody can foresee (path.<16 random hex
 * digits>), written into name[len]: whoever can write the directory cannot stop the profile by
 * making its names first (a taken name is skipped for another). Returns 0, or a negative errno
 * (-EEXIST when 64 names in a row were taken). */
static int link_beside(int fd, const char *path, char *name, size_t len) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  for (uint64_t i = 0; i < 64; i++) {
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) /* no entropy yet: rare */
      r = (plat_mono_ns() ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)&r) * 0x9e3779b97f4a7c15u + i;
    snprintf(name, len, "%s.%016" PRIx64, path, r);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno != EEXIST) return -errno;
  }
  return -EEXIST;
}

/* Gives the unnamed file fd the name path: directly when nothing is there yet, else through a
 * name of its own renamed over the target (a writer killed between the two leaves that name).
 * Returns 0 or a negative errno. */
static int link_unnamed(int fd, const char *path) {
  char proc[64], tmp[OPT_FILE_MAX + 32];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) return 0;
  if (errno != EEXIST) return -errno;
  int rc = link_beside(fd, path, tmp, sizeof tmp);
  if (rc) return rc;
  if (rename(tmp, path) == 0) return 0;
  int e = errno;
  unlink(tmp);
  return -e;
}

/* Finishes the file: named path, or gone (commit.h). Returns rc or the first failure. */
int commit_close(struct commit_file *o, const char *path, int rc) {
  if (fflush(o->f) != 0 || ferror(o->f)) rc = rc ? rc : -errno;
  if (!rc && fsync(fileno(o->f)) != 0) rc = -errno;
  if (!rc && o->unnamed) rc = link_unnamed(fileno(o->f), path);
  if (fclose(o->f) != 0 && !rc) rc = -errno;
  if (!o->unnamed) {
    if (!rc && rename(o->tmp, path) != 0) rc = -errno;
    if (rc) unlink(o->tmp);
  }
  return rc > 0 ? -rc : rc;
}

/* The probe at start (commit.h): a temporary file beside path, made and removed. */
int commit_check_writable(const char *path, const char *opt, char *err, size_t errlen) {
  struct commit_file of;
  int rc = commit_open(path, &of);
  if (!rc && of.unnamed) { /* can it be given a name? (/proc mounted, links allowed) */
    char probe[sizeof of.tmp];
    int linked = link_beside(fileno(of.f), path, probe, sizeof probe);
    if (linked == 0) {
      unlink(probe);
    } else if (linked == -ENOENT) { /* no /proc: named temporaries then */
      unnamed_unusable = 1;
      fclose(of.f);
      rc = commit_open(path, &of);
    } else {
      rc = linked;
      fclose(of.f);
      of.f = NULL;
    }
  }
  if (rc) {
    snprintf(err, errlen,
             "%s=%s: cannot be written (a temporary file beside it could not be created: %s)", opt,
             path, strerror(-rc));
    return rc;
  }
  fclose(of.f);
  if (!of.unnamed) unlink(of.tmp);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s=%s: is a directory", opt, path);
    return -EISDIR;
  }
  return 0;
}

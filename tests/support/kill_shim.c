/* LD_PRELOAD shim for the crash tests: counts the calls that change the disk (write to
 * a regular file, fsync, rename, link, unlink, in any thread) and SIGKILLs the process
 * just before the Nth one, so a test can stop a command at every step in turn.
 *   SITEPATCH_KILL_AT=N      kill before the Nth call (0: only count)
 *   SITEPATCH_KILL_COUNT=F   keep the number of calls made so far in F
 *   SITEPATCH_KILL_SIGNAL=S  send signal S instead of SIGKILL (SIGINT: 2), once
 *   SITEPATCH_KILL_PROGRAM=P only in a program whose name contains P (others pass
 *                            everything through and keep LD_PRELOAD for their children)
 * The program it acts in does not pass it on to its children. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int active;
static long kill_at;
static int kill_signal = SIGKILL;
static long calls;
static int count_fd = -1;

__attribute__((constructor)) static void init(void) {
  extern char* program_invocation_short_name;
  const char* program = getenv("SITEPATCH_KILL_PROGRAM");
  if (program && *program && !strstr(program_invocation_short_name, program)) return;
  active = 1;
  const char* at = getenv("SITEPATCH_KILL_AT");
  kill_at = at ? atol(at) : 0;
  const char* sig = getenv("SITEPATCH_KILL_SIGNAL");
  if (sig && *sig) kill_signal = atoi(sig);
  const char* count_file = getenv("SITEPATCH_KILL_COUNT");
  /* Kept up to date at every step: a program may leave with _exit (the agent does). */
  if (count_file && *count_file)
    count_fd = (int)syscall(SYS_openat, AT_FDCWD, count_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  unsetenv("LD_PRELOAD");
}

static void step(void) {
  if (!active) return;
  long n = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
  if (count_fd >= 0) {
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%020ld\n", n);
    int saved = errno;
    syscall(SYS_pwrite64, count_fd, buf, (size_t)len, (off_t)0);
    errno = saved;
  }
  if (kill_at > 0 && n == kill_at) kill(getpid(), kill_signal);
}

#define REAL(name) static __typeof__(name)* real_##name; if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void* buf, size_t n) {
  REAL(write);
  struct stat st;
  if (active && fd > 2 && fd != count_fd && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) step();
  return real_write(fd, buf, n);
}
int fsync(int fd) { REAL(fsync); step(); return real_fsync(fd); }
int fdatasync(int fd) { REAL(fdatasync); step(); return real_fdatasync(fd); }
int rename(const char* a, const char* b) { REAL(rename); step(); return real_rename(a, b); }
int renameat(int da, const char* a, int db, const char* b) {
  REAL(renameat); step(); return real_renameat(da, a, db, b);
}
int link(const char* a, const char* b) { REAL(link); step(); return real_link(a, b); }
int linkat(int da, const char* a, int db, const char* b, int f) {
  REAL(linkat); step(); return real_linkat(da, a, db, b, f);
}
int unlink(const char* a) { REAL(unlink); step(); return real_unlink(a); }
int unlinkat(int d, const char* a, int f) { REAL(unlinkat); step(); return real_unlinkat(d, a, f); }

/* LD_PRELOAD shim for the crash tests: counts the calls that change the disk (write to
 * a regular file, fsync, rename, link, unlink, in any thread) and SIGKILLs the process
 * just before the Nth one, so a test can stop a command at every step in turn.
 *   SITEPATCH_KILL_AT=N      kill before the Nth call (0: only count)
 *   SITEPATCH_KILL_COUNT=F   write the number of calls made to F at a normal exit
 * Children (the Python agent) do not inherit it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long kill_at;
static long calls;
static const char* count_file;

__attribute__((constructor)) static void init(void) {
  const char* at = getenv("SITEPATCH_KILL_AT");
  kill_at = at ? atol(at) : 0;
  count_file = getenv("SITEPATCH_KILL_COUNT");
  if (count_file) count_file = strdup(count_file);
  unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void fini(void) {
  if (!count_file) return;
  FILE* f = fopen(count_file, "w");
  if (f) {
    fprintf(f, "%ld\n", __atomic_load_n(&calls, __ATOMIC_SEQ_CST));
    fclose(f);
  }
}

static void step(void) {
  long n = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
  if (kill_at > 0 && n == kill_at) kill(getpid(), SIGKILL);
}

#define REAL(name) static __typeof__(name)* real_##name; if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void* buf, size_t n) {
  REAL(write);
  struct stat st;
  if (fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) step();
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

#include "sitepatch/util/interrupt.hpp"

#include <signal.h>

#include <string>

namespace sitepatch::util {
namespace {

volatile sig_atomic_t g_noted = 0;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];
int g_depth = 0;  // guards alive (one thread makes them)

extern "C" void note_signal(int sig) {
  if (g_noted == 0) g_noted = sig;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  // Nested (a write inside an apply whose check follows): the outermost one acts.
  if (g_depth++ > 0) return;
  g_noted = 0;
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a blocked poll or read returns EINTR, so whoever waits looks at
  // interrupted() at once.
  sa.sa_flags = SA_RESETHAND;
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &g_old[i]);
}

InterruptGuard::~InterruptGuard() {
  if (--g_depth > 0) return;
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_old[i], nullptr);
}

int interrupted() { return g_noted; }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
  }
  static thread_local std::string other;
  other = "signal " + std::to_string(sig);
  return other.c_str();
}

}  // namespace sitepatch::util

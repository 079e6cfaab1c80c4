#include "common/thread_priority.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace stave {

void LowerCurrentThreadPriority(int niceness) {
  // On Linux, PRIO_PROCESS with a thread's id sets that thread alone. getpriority's -1 is
  // also a nice value: errno tells a failure apart.
  pid_t thread = gettid();
  errno = 0;
  int current = getpriority(PRIO_PROCESS, static_cast<id_t>(thread));
  if (errno != 0) return;
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(thread), current + niceness);
}

}  // namespace stave

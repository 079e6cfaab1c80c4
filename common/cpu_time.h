#pragma once

#include <chrono>
#include <ctime>

namespace stave {

/// CPU time the calling thread has used so far (CLOCK_THREAD_CPUTIME_ID): what a piece of
/// work cost, unlike the wall clock, whatever else the machine runs meanwhile.
inline std::chrono::nanoseconds ThreadCpuTime() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace stave

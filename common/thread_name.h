#pragma once

#include <string_view>

namespace stave {

/// Names the calling thread, as `top -H`, `perf` and /proc/<pid>/task/*/comm show it. Linux
/// keeps 15 bytes; a longer name is cut.
void NameCurrentThread(std::string_view name);

}  // namespace stave

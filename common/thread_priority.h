#pragma once

namespace stave {

/// Raises the calling thread's nice value by `niceness` (Linux schedules each thread apart),
/// so that threads at the process's own priority run first when both want a core. Lowering
/// is allowed to any process; a failure leaves the thread as it was.
void LowerCurrentThreadPriority(int niceness);

}  // namespace stave

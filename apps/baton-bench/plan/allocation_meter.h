// What this thread's C++ allocations hold: `baton-bench` replaces the global operator new and
// delete (allocation_meter.cc) to count, per thread, the bytes live now and their peak since
// the last reset — what `bench plan` reports per action. The count is a thread_local add, a
// few nanoseconds per allocation. A block freed by another thread than the one that made it
// is taken off the freeing thread's count (which may go below zero), and memory from
// malloc() itself is not counted: measure single-threaded C++ work.
#pragma once

#include <cstdint>

namespace baton_app {

struct AllocationCount {
  std::int64_t live = 0;  // bytes allocated by this thread and not freed
  std::int64_t peak = 0;  // the most `live` has been since reset_allocation_peak()
};

AllocationCount thread_allocations();
// Sets the peak to what is live now.
void reset_allocation_peak();

}  // namespace baton_app

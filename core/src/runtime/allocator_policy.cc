#include <malloc.h>

#include <cstdlib>
#include <string>

#include "baton/runtime/compute_environment.h"

namespace baton {

std::string apply_allocator_policy() {
  for (const char* tuned :
       {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"}) {
    if (std::getenv(tuned) != nullptr) return std::string("malloc as tuned by ") + tuned;
  }
  // Blocks up to 256 MiB come from the heap (and are reused) instead of their own mmap; the
  // heap is only trimmed once 1 GiB at its top is free.
  const bool ok = mallopt(M_MMAP_THRESHOLD, 256 << 20) == 1 &&
                  mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1 && mallopt(M_TOP_PAD, 64 << 20) == 1;
  return ok ? "malloc keeps freed memory for reuse" : "malloc defaults (mallopt refused)";
}

void release_free_heap_pages() {
  malloc_trim(0);
}

}  // namespace baton

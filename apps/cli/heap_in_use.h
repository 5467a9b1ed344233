// The heap's bytes in use: what malloc has handed out and not got back, in every arena and in
// the blocks it mmapped (glibc's mallinfo2; tens of microseconds, so for profilers and
// benches, never the training step). 0 where glibc is older than 2.33.
#pragma once

#include <malloc.h>

#include <cstdint>

namespace baton_app {

inline std::int64_t heap_bytes_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  return static_cast<std::int64_t>(info.uordblks + info.hblkhd);
#else
  return 0;
#endif
}

}  // namespace baton_app

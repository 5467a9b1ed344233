// Waits that say what they wait for. While a WaitNotice lives longer than a few seconds (5 by
// default; BATON_WAIT_NOTICE_S changes it), a line at info says what is awaited, from whom and
// for how long so far, again every 10 s, and once more when the wait ends: a slow connect or a
// stuck peer is never silent.
//
//   const baton::WaitNotice notice("runtime", "the activations of stage 1, mb 3 from rank 0");
//   work->wait(timeout);
//
// On a hot path (every receive of a step) pass `describe` and a `context` instead: the text
// is then built only for a wait that lasts, and a notice costs a lock and an insert.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "baton/export.h"

namespace baton {

class BATON_API WaitNotice {
 public:
  using Describe = std::string (*)(const void* context);

  WaitNotice(const char* component, std::string what);
  // `describe(context)` says what is awaited, called (from another thread) only once the
  // wait has lasted; `context` must outlive the notice.
  WaitNotice(const char* component, Describe describe, const void* context);
  ~WaitNotice();
  WaitNotice(const WaitNotice&) = delete;
  WaitNotice& operator=(const WaitNotice&) = delete;

 private:
  std::uint64_t id_;
};

// How long a wait lasts before its first notice (tests make it short).
BATON_API void set_wait_notice_delay(std::chrono::milliseconds delay);

}  // namespace baton

// Waiting until every rank has reported through the store: each rank adds 1 to a counter,
// and one rank waits for it to reach the world size (checkpoints, traces).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "baton/error.h"
#include "baton/store.h"
#include "baton/wait_notice.h"

namespace baton_app {

// Polls `key` until it reaches `expected` or `timeout` passes; throws baton::Error naming
// `what` and how many reported.
inline void wait_for_count(baton::Store& store, const std::string& key, int expected,
                           std::chrono::milliseconds timeout, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const baton::WaitNotice notice("store", "every rank to report (" + what + ")");
  for (std::int64_t count; (count = store.add(key, 0)) < expected;) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw baton::Error(what + ": only " + std::to_string(count) + " of " +
                         std::to_string(expected) + " ranks reported within " +
                         std::to_string(timeout.count() / 1000) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace baton_app

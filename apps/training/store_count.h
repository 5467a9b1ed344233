// Waiting until every rank has reported through the store: each rank adds 1 to a counter,
// and one rank waits for it to reach the world size (checkpoints, traces).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "baton/error.h"
#include "baton/store.h"
#include "baton/stores.h"
#include "baton/wait_notice.h"

namespace baton_app {

// Polls `key` until it reaches `expected` or `timeout` passes; throws baton::Error naming
// `what` and how many reported.
inline void wait_for_count(baton::Store& store, const std::string& key, int expected,
                           std::chrono::milliseconds timeout, const std::string& what) {
  const baton::WaitNotice notice("store", "every rank to report (" + what + ")");
  const std::int64_t count = baton::wait_for_counter(store, key, expected, timeout);
  if (count < expected) {
    throw baton::Error(what + ": only " + std::to_string(count) + " of " +
                       std::to_string(expected) + " ranks reported within " +
                       std::to_string(timeout.count() / 1000) + " s");
  }
}

}  // namespace baton_app

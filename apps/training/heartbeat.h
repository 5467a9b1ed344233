// Finds a hung neighbour while training, before the next transfer's timeout: every rank
// counts up its heartbeat in the store from a thread of its own, and watches the counters of
// the ranks it exchanges tensors with. A neighbour whose counter has not moved for the
// heartbeat period (and that has not said it is done) is hung — stopped, or stuck outside
// baton — and `on_hung` is called once with a sentence naming it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/store.h"

namespace baton_app {

class Heartbeat {
 public:
  // `period` zero: does nothing.
  Heartbeat(std::shared_ptr<baton::Store> store, int rank, std::vector<int> neighbours,
            std::chrono::milliseconds period, std::function<void(const std::string&)> on_hung);
  // Says this rank is done (it is not hung when its heartbeat stops), then stops.
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  void run();

  std::shared_ptr<baton::Store> store_;
  int rank_;
  std::vector<int> neighbours_;
  std::chrono::milliseconds period_;
  std::function<void(const std::string&)> on_hung_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace baton_app

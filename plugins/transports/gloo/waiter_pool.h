// Threads that sit in gloo's blocking waits.
//
// gloo offers no completion callback and no non-blocking test, and a gloo wait that times
// out closes every connection of the context. So each posted operation gets a thread that
// waits on it without a deadline and publishes the outcome; Work::wait()/test() then apply
// the caller's timeout to that outcome, and an expired wait leaves the transport usable.
// Threads are reused; the pool grows to the largest number of operations in flight.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace baton_gloo {

class WaiterPool {
 public:
  WaiterPool() = default;
  ~WaiterPool();
  WaiterPool(const WaiterPool&) = delete;
  WaiterPool& operator=(const WaiterPool&) = delete;

  // Runs `task` on an idle thread, or on a new one when none is idle.
  void run(std::function<void()> task);

  // Lets queued and running tasks finish, then joins every thread. The owner interrupts the
  // gloo waits first, so this does not block for long.
  void shutdown();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace baton_gloo

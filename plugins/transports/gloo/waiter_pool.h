// Threads that sit in gloo's blocking waits for operations nobody else waits for: those a
// caller test()s, and those whose Work was dropped before they ended (see operation.h).
// Threads are reused; the pool grows to the largest number of such waits at once.
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

  // Runs `task` on an idle thread, or on a new one when none is idle; after shutdown(),
  // drops it.
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

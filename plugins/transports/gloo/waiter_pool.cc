#include "waiter_pool.h"

namespace baton_gloo {

WaiterPool::~WaiterPool() {
  shutdown();
}

void WaiterPool::run(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  // After shutdown the owner has settled every operation: nothing is left to wait for.
  if (stopping_) return;
  tasks_.push_back(std::move(task));
  if (tasks_.size() > idle_) {
    threads_.emplace_back([this] { loop(); });
  } else {
    wake_.notify_one();
  }
}

void WaiterPool::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ++idle_;
    wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    --idle_;
    if (tasks_.empty()) return;  // stopping, nothing left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

void WaiterPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (std::thread& thread : threads) thread.join();
}

}  // namespace baton_gloo

#include "deadline_timer.h"

namespace baton_gloo {

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

DeadlineTimer::Id DeadlineTimer::schedule(Clock::time_point deadline,
                                          std::function<void()> action) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Id id = next_id_++;
  const bool earlier = deadline < sleeping_until_;
  pending_.emplace(std::make_pair(deadline, id), std::move(action));
  deadlines_.emplace(id, deadline);
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { loop(); });
  } else if (earlier) {
    wake_.notify_one();
  }
  return id;
}

void DeadlineTimer::cancel(Id id) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto found = deadlines_.find(id);
  if (found != deadlines_.end()) {
    // Not woken: the thread finds the earliest deadline gone and sleeps until the next one.
    pending_.erase(std::make_pair(found->second, id));
    deadlines_.erase(found);
    return;
  }
  settled_.wait(lock, [&] { return running_ != id; });
}

void DeadlineTimer::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (pending_.empty()) {
      sleeping_until_ = Clock::time_point::max();
      wake_.wait(lock);
      continue;
    }
    const Clock::time_point deadline = pending_.begin()->first.first;
    if (Clock::now() < deadline) {
      sleeping_until_ = deadline;
      wake_.wait_until(lock, deadline);
      continue;
    }
    sleeping_until_ = Clock::time_point::min();  // running actions: schedule() need not wake
    auto due = pending_.begin();
    const Id id = due->first.second;
    std::function<void()> action = std::move(due->second);
    pending_.erase(due);
    deadlines_.erase(id);
    running_ = id;
    lock.unlock();
    action();
    lock.lock();
    running_ = 0;
    settled_.notify_all();
  }
}

}  // namespace baton_gloo

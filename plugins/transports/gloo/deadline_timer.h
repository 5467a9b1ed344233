// Runs an action at a deadline unless it is cancelled first; one thread serves every
// deadline of a transport.
//
// The gloo transport uses it to bound the caller's waits: a gloo wait given a deadline that
// expires closes every connection of the context, so callers wait in gloo without one and
// the timer interrupts the wait (abortWaitRecv/abortWaitSend) when the caller's timeout is
// up. Waits usually share one timeout, so a new deadline is normally later than the one the
// thread already sleeps toward, and scheduling it (or cancelling) does not wake the thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace baton_gloo {

// The deadline given to gloo's own waits: never reached. A gloo wait whose deadline expires
// closes every connection, so waits are bounded by a DeadlineTimer instead.
constexpr std::chrono::milliseconds kNoDeadline = std::chrono::hours(24 * 30);

class DeadlineTimer {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = std::uint64_t;

  DeadlineTimer() = default;
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  Id schedule(Clock::time_point deadline, std::function<void()> action);
  // When cancel() returns, the action has either run to its end or will never run.
  void cancel(Id id);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;     // the thread: a new earliest deadline, or stopping
  std::condition_variable settled_;  // cancel(): the running action finished
  std::map<std::pair<Clock::time_point, Id>, std::function<void()>> pending_;
  std::map<Id, Clock::time_point> deadlines_;
  Id next_id_ = 1;
  // The deadline the thread sleeps toward (max: none): a new deadline wakes it only when
  // earlier. After a cancel it may wake for nothing; it then sleeps toward the next one.
  Clock::time_point sleeping_until_ = Clock::time_point::max();
  Id running_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // started with the first deadline
};

}  // namespace baton_gloo

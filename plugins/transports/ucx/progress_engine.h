// The thread that moves UCX traffic while the rank computes, without burning a core.
//
// UCX progresses only when someone calls ucp_worker_progress(). Polling all the time costs
// a whole core (half of a 2-core machine); never polling stalls rendezvous and fragmented
// transfers while the rank computes. So one thread per transport:
//
//   * polls while there is activity: after any progress, post, wait or wake-up it keeps
//     polling for `poll_window` (progress_poll_us), which keeps back-to-back messages at
//     polling latency;
//   * then arms the worker (ucp_worker_arm) and sleeps in poll(2) on its event fd. UCX
//     signals the fd when a message arrives or a transfer advances (send, receive and partial
//     TX/RX events), so large transfers keep moving step by step while the thread sleeps;
//   * sleeps without a deadline when no operation is outstanding (zero CPU when idle), and at
//     most kOutstandingTick while one is: a peer that died is noticed by progress (a closed
//     TCP socket, a keepalive) and does not always raise an event.
//
// A caller waiting for an operation polls the worker itself for a short budget
// (wait_poll_us) before it sleeps: a reply that comes within the budget is seen at polling
// latency with no thread hand-off. While a caller polls, the thread stands aside.
//
// Every call into the worker is serialized by one mutex (the worker runs in
// UCS_THREAD_MODE_SERIALIZED). Callers take it through caller_lock(), which the polling
// thread lets through first, so posting is never starved by the poll loop.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace baton_ucx {

class ProgressEngine {
 public:
  struct Hooks {
    // Runs under the mutex after each round of ucp_worker_progress() (deferred work that
    // must not run inside UCX callbacks).
    std::function<void()> after_progress;
    // Whether any operation is outstanding; read without the mutex.
    std::function<bool()> has_outstanding;
    // The worker cannot be armed any more; the engine falls back to ticking.
    std::function<void(const std::string&)> on_fatal;
  };

  // How long the thread sleeps at most while operations are outstanding.
  static constexpr std::chrono::milliseconds kOutstandingTick{100};

  ProgressEngine(ucp_worker_h worker, int event_fd, std::chrono::microseconds poll_window,
                 Hooks hooks);
  ~ProgressEngine();
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  void start();
  // Joins the thread. Idempotent; poke() does nothing afterwards.
  void stop();

  // Something happened that needs progress soon (a post, a waiter): poll for a window, and
  // wake the thread if it sleeps. Safe from any thread, also after stop().
  void poke();

  // The mutex serializing every UCX call, taken ahead of the polling thread.
  std::unique_lock<std::mutex> caller_lock();

  // Progresses the worker from the calling thread until `done()` or `budget` is spent;
  // returns done(). The progress thread does not poll meanwhile.
  bool poll_until(const std::function<bool()>& done, std::chrono::microseconds budget);

  // Progresses the worker from the calling thread until it is quiet (teardown, after stop()).
  void drain();

 private:
  void run();
  unsigned progress_round();
  // False when it woke for a tick rather than an event or a poke.
  bool sleep_until_event(std::uint64_t seen_pokes);

  const ucp_worker_h worker_;
  const int event_fd_;
  const std::chrono::microseconds poll_window_;
  const Hooks hooks_;

  std::mutex mutex_;
  std::atomic<int> contenders_{0};  // callers waiting for mutex_
  std::atomic<int> pollers_{0};     // callers inside poll_until()
  std::mutex pollers_mutex_;        // with pollers_gone_: the thread waits out the pollers
  std::condition_variable pollers_gone_;

  std::atomic<std::uint64_t> pokes_{0};
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stopping_{false};
  bool armable_ = true;  // thread only

  std::mutex lifecycle_mutex_;  // orders poke()'s signal against stop()
  bool running_ = false;
  std::thread thread_;
};

}  // namespace baton_ucx

#include "progress_engine.h"

#include <poll.h>
#include <pthread.h>

#include <cerrno>

#include "worker.h"

namespace baton_ucx {

constexpr std::chrono::milliseconds ProgressEngine::kOutstandingTick;

ProgressEngine::ProgressEngine(ucp_worker_h worker, int event_fd,
                               std::chrono::microseconds poll_window, Hooks hooks)
    : worker_(worker), event_fd_(event_fd), poll_window_(poll_window), hooks_(std::move(hooks)) {}

ProgressEngine::~ProgressEngine() {
  stop();
}

void ProgressEngine::start() {
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  if (running_) return;
  stopping_.store(false);
  thread_ = std::thread([this] { run(); });
  running_ = true;
}

void ProgressEngine::stop() {
  {
    std::lock_guard<std::mutex> lock(lifecycle_mutex_);
    if (!running_) return;
    running_ = false;
    stopping_.store(true);
    ucp_worker_signal(worker_);  // documented as safe from any thread
  }
  {
    std::lock_guard<std::mutex> lock(pollers_mutex_);
    pollers_gone_.notify_all();
  }
  thread_.join();
}

void ProgressEngine::poke() {
  pokes_.fetch_add(1);
  // Pairs with sleep_until_event(): either the thread sees the new poke count before it
  // sleeps, or this sees `sleeping_` and signals the fd (a signal before ucp_worker_arm makes
  // the arm report BUSY, so it is never lost).
  if (!sleeping_.load()) return;
  std::lock_guard<std::mutex> lock(lifecycle_mutex_);
  if (running_) ucp_worker_signal(worker_);
}

std::unique_lock<std::mutex> ProgressEngine::caller_lock() {
  contenders_.fetch_add(1);
  std::unique_lock<std::mutex> lock(mutex_);
  contenders_.fetch_sub(1);
  return lock;
}

unsigned ProgressEngine::progress_round() {
  // Let callers that wait for the mutex in first: an unlock followed by an immediate relock
  // in this loop would otherwise keep them out for as long as the thread polls.
  while (contenders_.load() > 0) std::this_thread::yield();
  std::lock_guard<std::mutex> lock(mutex_);
  unsigned events = 0;
  while (unsigned n = ucp_worker_progress(worker_)) events += n;
  if (hooks_.after_progress) hooks_.after_progress();
  return events;
}

bool ProgressEngine::poll_until(const std::function<bool()>& done,
                                std::chrono::microseconds budget) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + budget;
  pollers_.fetch_add(1);
  bool finished = done();
  while (!finished && Clock::now() < deadline) {
    {
      std::unique_lock<std::mutex> lock = caller_lock();
      while (ucp_worker_progress(worker_) != 0) {
      }
      if (hooks_.after_progress) hooks_.after_progress();
    }
    finished = done();
  }
  if (pollers_.fetch_sub(1) == 1) {
    std::lock_guard<std::mutex> lock(pollers_mutex_);
    pollers_gone_.notify_all();
  }
  return finished;
}

void ProgressEngine::drain() {
  std::lock_guard<std::mutex> lock(mutex_);
  while (ucp_worker_progress(worker_) != 0) {
  }
  if (hooks_.after_progress) hooks_.after_progress();
}

void ProgressEngine::run() {
  pthread_setname_np(pthread_self(), "baton-ucx");
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_activity = Clock::now();
  std::uint64_t seen_pokes = pokes_.load();
  while (!stopping_.load()) {
    if (pollers_.load() > 0) {
      // A waiting caller polls; two pollers would only fight over the worker's mutex (and,
      // on a small machine, over the cores). Resume when it stops, without a poll window:
      // it stopped because its operation finished or its budget ran out.
      std::unique_lock<std::mutex> lock(pollers_mutex_);
      pollers_gone_.wait(lock, [this] { return pollers_.load() == 0 || stopping_.load(); });
      last_activity = Clock::now() - poll_window_;
      continue;
    }
    const unsigned events = progress_round();
    const std::uint64_t pokes = pokes_.load();
    const Clock::time_point now = Clock::now();
    if (events > 0 || pokes != seen_pokes) {
      last_activity = now;
      seen_pokes = pokes;
      continue;
    }
    if (now - last_activity < poll_window_) continue;
    // Events come in bursts (a rendezvous is several messages): poll a window after an
    // event, but not after a mere tick.
    if (sleep_until_event(seen_pokes)) last_activity = Clock::now();
  }
}

bool ProgressEngine::sleep_until_event(std::uint64_t seen_pokes) {
  sleeping_.store(true);
  if (pokes_.load() != seen_pokes || stopping_.load()) {
    sleeping_.store(false);
    return true;
  }
  if (armable_) {
    ucs_status_t status;
    {
      while (contenders_.load() > 0) std::this_thread::yield();
      std::lock_guard<std::mutex> lock(mutex_);
      status = ucp_worker_arm(worker_);
    }
    if (status == UCS_ERR_BUSY) {  // unprocessed events: progress them first
      sleeping_.store(false);
      return true;
    }
    if (status != UCS_OK) {
      armable_ = false;
      if (hooks_.on_fatal) hooks_.on_fatal("ucp_worker_arm failed: " + status_text(status));
    }
  }
  const bool outstanding = hooks_.has_outstanding && hooks_.has_outstanding();
  // Without a working arm the fd cannot be trusted: tick, so that traffic still moves.
  const int timeout_ms =
      (outstanding || !armable_) ? static_cast<int>(kOutstandingTick.count()) : -1;
  pollfd descriptor{event_fd_, POLLIN, 0};
  int ready;
  while ((ready = ::poll(&descriptor, 1, timeout_ms)) < 0 && errno == EINTR) {
  }
  sleeping_.store(false);
  return ready != 0;
}

}  // namespace baton_ucx

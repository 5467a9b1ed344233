#include "baton/collective_queue.h"

#include <exception>
#include <utility>

#include "baton/error.h"
#include "baton/transport_support.h"

namespace baton {

// One queued all-reduce: its job, and its outcome, set once.
struct CollectiveQueue::Entry {
  CollectiveDescription what;
  int rank = 0;
  Job job;
  std::mutex mutex;
  std::condition_variable done;
  bool settled = false;
  std::string error;  // empty when it succeeded

  std::string name() const { return rank_prefix(rank) + what.str(); }
  void settle(std::string failure) {
    std::lock_guard<std::mutex> lock(mutex);
    if (settled) return;
    settled = true;
    error = std::move(failure);
    done.notify_all();
  }
};

class CollectiveQueue::EntryWork : public Work {
 public:
  EntryWork(std::shared_ptr<Entry> entry, std::shared_ptr<TransportAbortHandle> abort_handle)
      : entry_(std::move(entry)), abort_handle_(std::move(abort_handle)) {}

  void wait(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(entry_->mutex);
    if (!entry_->done.wait_for(lock, timeout, [this] { return entry_->settled; })) {
      lock.unlock();
      abort_handle_->abort_on_timeout(entry_->name() + " timed out after " +
                                      format_seconds(timeout));
    }
    if (!entry_->error.empty()) throw TransportError(entry_->error);
  }

  bool test() override {
    std::lock_guard<std::mutex> lock(entry_->mutex);
    if (!entry_->settled) return false;
    if (!entry_->error.empty()) throw TransportError(entry_->error);
    return true;
  }

 private:
  std::shared_ptr<Entry> entry_;
  std::shared_ptr<TransportAbortHandle> abort_handle_;
};

CollectiveQueue::CollectiveQueue(int rank, std::vector<int> group,
                                 std::shared_ptr<TransportAbortHandle> abort_handle)
    : rank_(rank), group_(std::move(group)), abort_handle_(std::move(abort_handle)) {
  thread_ = std::thread([this] { run(); });
}

CollectiveQueue::~CollectiveQueue() {
  fail_all("the transport was shut down");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::unique_ptr<Work> CollectiveQueue::post(const std::vector<at::Tensor>& tensors, Job job,
                                            bool allow_non_cpu) {
  auto entry = std::make_shared<Entry>();
  entry->rank = rank_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry->what = describe_all_reduce(rank_, group_, posted_ + 1, tensors, allow_non_cpu);
    ++posted_;
    entry->job = std::move(job);
    if (!failure_.empty()) {
      entry->settle(entry->name() + " failed: " + failure_);
    } else {
      queue_.push_back(entry);
    }
  }
  wake_.notify_all();
  return std::make_unique<EntryWork>(std::move(entry), abort_handle_);
}

void CollectiveQueue::fail_all(const std::string& reason) {
  std::deque<std::shared_ptr<Entry>> failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = reason;
    failed.swap(queue_);
    if (running_) failed.push_front(running_);
  }
  for (auto& entry : failed) entry->settle(entry->name() + " failed: " + reason);
}

void CollectiveQueue::run() {
  for (;;) {
    std::shared_ptr<Entry> entry;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      entry = queue_.front();
      queue_.pop_front();
      running_ = entry;
    }
    std::string error;
    try {
      entry->job();
    } catch (const std::exception& caught) {
      error = caught.what();
    } catch (...) {
      error = "an exception that is not a std::exception";
    }
    entry->job = nullptr;  // what it captured (tensors) is released now
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.reset();
    }
    if (error.empty()) {
      entry->settle(std::string());
      continue;
    }
    // The members no longer agree on what comes next: nothing later in the group can run.
    const std::string name = entry->name();
    entry->settle(name + " failed: " + error);
    fail_all(name + " failed before it: " + error);
  }
}

}  // namespace baton

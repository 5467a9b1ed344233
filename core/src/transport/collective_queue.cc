#include "baton/collective_queue.h"

#include <exception>
#include <utility>

#include "baton/error.h"
#include "baton/transport_support.h"

namespace baton {

// One queued all-reduce: its job, and its outcome.
struct CollectiveQueue::Entry : Outcome {
  std::string name;  // "rank 1: all-reduce #3 in group [1, 3] (1 tensor, 4096 bytes)"
  Job job;
};

class CollectiveQueue::EntryWork : public Work {
 public:
  EntryWork(std::shared_ptr<Entry> entry, std::shared_ptr<TransportAbortHandle> abort_handle)
      : entry_(std::move(entry)), abort_handle_(std::move(abort_handle)) {}

  void wait(std::chrono::milliseconds timeout) override {
    if (!entry_->wait_for(timeout)) {
      abort_handle_->abort_on_timeout(entry_->name + " timed out after " + format_seconds(timeout));
    }
  }

  bool test() override { return entry_->test(); }

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
  return post_named(
      [&](std::uint64_t sequence) {
        return describe_all_reduce(rank_, group_, sequence, tensors, allow_non_cpu).str();
      },
      std::move(job));
}

std::unique_ptr<Work> CollectiveQueue::post_named(
    const std::function<std::string(std::uint64_t)>& describe, Job job) {
  auto entry = std::make_shared<Entry>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry->name = rank_prefix(rank_) + describe(posted_ + 1);
    ++posted_;
    entry->job = std::move(job);
    if (!failure_.empty()) {
      entry->fail(entry->name + " failed: " + failure_);
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
  for (auto& entry : failed) entry->fail(entry->name + " failed: " + reason);
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
      entry->succeed();
      continue;
    }
    // The members no longer agree on what comes next: nothing later in the group can run.
    entry->fail(entry->name + " failed: " + error);
    fail_all(entry->name + " failed before it: " + error);
  }
}

}  // namespace baton

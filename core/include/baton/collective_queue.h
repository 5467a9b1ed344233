// What a transport needs to implement AllReduceTransport on top of a blocking algorithm (gloo's
// allreduce, a ring of sends and receives): one thread per group that runs the group's
// all-reduces one at a time, in the order they were posted, so that posting never blocks and
// the reduction overlaps with the caller's work; a Work per all-reduce with the rules of Work
// (errors name the group and the all-reduce, a timed-out wait aborts the transport); and
// abort/shutdown that fail what is queued.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/all_reduce.h"
#include "baton/export.h"
#include "baton/transfer_outcome.h"
#include "baton/transport.h"

namespace baton {

class BATON_API CollectiveQueue {
 public:
  // Runs one all-reduce; throws (baton::Error or any std::exception) when it fails.
  using Job = std::function<void()>;

  CollectiveQueue(int rank, std::vector<int> group,
                  std::shared_ptr<TransportAbortHandle> abort_handle);
  // Fails what is still queued ("the transport was shut down") and joins the thread. A job
  // that is running must be made to return first (the transport closes its connections).
  ~CollectiveQueue();
  CollectiveQueue(const CollectiveQueue&) = delete;
  CollectiveQueue& operator=(const CollectiveQueue&) = delete;

  // Queues `job`, described by `tensors` (checked by describe_all_reduce). After a job
  // failed, or after fail_all(), every later post fails with the same reason: the group's
  // members no longer agree on what comes next.
  std::unique_ptr<Work> post(const std::vector<at::Tensor>& tensors, Job job,
                             bool allow_non_cpu = false);

  // Queues `job`, named by `describe(sequence)` (its number in the group, from 1), which checks
  // what the job will touch and throws TransportError when it is wrong: a reduce-scatter or an
  // all-gather (describe_shard_collective, baton/shard_collectives.h).
  std::unique_ptr<Work> post_named(const std::function<std::string(std::uint64_t)>& describe,
                                   Job job);

  // Fails every queued all-reduce, and the running one, with `reason`, and refuses later ones:
  // their waits return at once. The running job itself goes on until its transfers fail (the
  // transport makes them) and the destructor waits for it.
  void fail_all(const std::string& reason);

 private:
  struct Entry;
  class EntryWork;
  void run();

  const int rank_;
  const std::vector<int> group_;
  const std::shared_ptr<TransportAbortHandle> abort_handle_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Entry>> queue_;
  std::shared_ptr<Entry> running_;
  std::uint64_t posted_ = 0;
  std::string failure_;  // why the group can run no more all-reduces; empty while it can
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace baton

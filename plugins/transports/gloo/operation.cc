#include "operation.h"

#include <algorithm>

#include "gloo_errors.h"

namespace baton_gloo {

namespace {

// gloo needs a valid address even for zero bytes; an empty tensor may have none.
char zero_byte_target;

// How long a wait gives gloo before sending a probe that is already due (see wait_claimed).
constexpr std::chrono::milliseconds kProbeGrace(2);

}  // namespace

Operation::Operation(int rank, baton::P2PDescription what, at::Tensor tensor,
                     std::uint64_t sequence, Clock::time_point probe_at)
    : TransferOutcome(rank, what),
      sequence_(sequence),
      probe_at_(probe_at),
      tensor_(std::move(tensor)),
      data_(what.bytes == 0 ? static_cast<void*>(&zero_byte_target) : tensor_.data_ptr()) {}

bool Operation::begin_reporting_mismatch() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reporting_mismatch_) return false;
  reporting_mismatch_ = true;
  return true;
}

void Operation::set_phase(Phase phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
}

std::unique_ptr<gloo::transport::UnboundBuffer> Operation::take_reusable_payload() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ != Status::kSucceeded || claimed_) return nullptr;
  return std::move(payload);
}

bool Operation::try_claim_locked() {
  if (claimed_) return false;
  claimed_ = true;
  return true;
}

void Operation::interrupt() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (payload == nullptr) return;  // given away for reuse: nobody waits for it any more
  if (what().direction == baton::P2PDirection::kSend) {
    payload->abortWaitSend();
  } else {
    payload->abortWaitRecv();
  }
}

bool Operation::wait_in_gloo() {
  bool completed = false;
  try {
    completed = what().direction == baton::P2PDirection::kSend
                    ? payload->waitSend(nullptr, kNoDeadline)
                    : payload->waitRecv(nullptr, kNoDeadline);
  } catch (const std::exception& error) {
    fail(name() + " failed: " + explain_gloo_error(error, what().peer));
    return true;
  }
  // An operation failed by abort() or a peer's failure stays failed: the first outcome wins.
  // gloo is done with the memory: the tensor is the caller's alone from here on, even while
  // this operation is still registered (the runtime reuses a receive buffer only when nothing
  // else refers to it), and before the outcome, since a waiter may reuse it at once.
  if (completed) {
    tensor_ = at::Tensor();
    succeed();
  }
  return completed;
}

bool Operation::wait_claimed(Clock::time_point deadline, OperationRegistry& registry) {
  for (;;) {
    const bool probe_first = !probed_ && probe_at_ < deadline;
    // An operation waited for long after it was posted has usually completed: gloo's wait
    // then returns at once, unless an interrupt is already due (which wins over a
    // completion), so a due probe gets a moment first instead of a message for nothing.
    const Clock::time_point until =
        probe_first ? std::min(deadline, std::max(probe_at_, Clock::now() + kProbeGrace))
                    : deadline;
    DeadlineTimer::Id timer = 0;
    if (until != Clock::time_point::max()) {
      // Interrupting the gloo wait leaves the operation pending and the connections intact.
      timer = registry.timer.schedule(until, [this] { interrupt(); });
    }
    const bool completed = wait_in_gloo();
    if (timer != 0) registry.timer.cancel(timer);
    if (completed || settled()) return true;
    const Clock::time_point now = Clock::now();
    if (probe_first && now >= probe_at_) {
      probed_ = true;
      registry.probe(shared_from_this());
    } else if (now >= deadline) {
      return false;
    }
    // Otherwise an interrupt meant for an earlier wait: wait again.
  }
}

std::string Operation::describe_timeout(std::chrono::milliseconds timeout) {
  std::string message = timeout_message(timeout);
  const std::string peer = "rank " + std::to_string(what().peer);
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_ == Phase::kAwaitingChannel) {
    message += " (" + peer + " has sent nothing with this tag yet)";
  } else if (what().direction == baton::P2PDirection::kSend) {
    message += " (" + peer + " has not posted a matching receive)";
  }
  return message;
}

bool Operation::wait(std::chrono::milliseconds timeout, OperationRegistry& registry) {
  // A timeout too long to add to the clock means no deadline.
  const Clock::time_point now = Clock::now();
  const Clock::time_point deadline =
      timeout < std::chrono::hours(24 * 365 * 100) ? now + timeout : Clock::time_point::max();
  std::unique_lock<std::mutex> lock(mutex_);
  if (status_ == Status::kPending && try_claim_locked()) {
    lock.unlock();
    wait_claimed(deadline, registry);
    lock.lock();
    claimed_ = false;
  } else {
    done_.wait_for(lock, timeout, [this] { return status_ != Status::kPending; });
  }
  if (status_ == Status::kFailed) throw baton::TransportError(error_);
  return status_ == Status::kSucceeded;
}

void Operation::wait_in_background(OperationRegistry& registry,
                                   const std::function<void()>& on_settled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_ != Status::kPending || !try_claim_locked()) return;
  }
  // The registry outlives the pool's threads: the pool is one of its members.
  registry.waiters.run([self = shared_from_this(), &registry, on_settled] {
    // No deadline: abort() and failures settle the operation before interrupting it.
    self->wait_claimed(Clock::time_point::max(), registry);
    on_settled();
  });
}

bool Operation::test(OperationRegistry& registry, const std::function<void()>& on_settled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_ == Status::kFailed) throw baton::TransportError(error_);
    if (status_ == Status::kSucceeded) return true;
  }
  wait_in_background(registry, on_settled);
  return false;
}

bool Operation::settled_by(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  return done_.wait_until(lock, deadline, [this] { return status_ != Status::kPending; });
}

void OperationRegistry::add(const std::shared_ptr<Operation>& operation) {
  std::lock_guard<std::mutex> lock(mutex_);
  in_flight_[operation.get()] = operation;
}

void OperationRegistry::remove(const Operation* operation) {
  std::shared_ptr<Operation> last;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = in_flight_.find(operation);
    if (found == in_flight_.end()) return;
    last = std::move(found->second);
    in_flight_.erase(found);
  }
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer = last->take_reusable_payload();
  std::unique_ptr<gloo::transport::UnboundBuffer> evicted;  // destroyed outside the lock
  if (buffer != nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    reusable_.push_back(std::move(buffer));
    if (reusable_.size() > kReusableBuffers) {
      evicted = std::move(reusable_.front());
      reusable_.pop_front();
    }
  }
}

std::unique_ptr<gloo::transport::UnboundBuffer> OperationRegistry::reuse_buffer(const void* data,
                                                                                std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Newest first: the buffer of the last operation on this tensor is the likeliest match.
  for (auto it = reusable_.rbegin(); it != reusable_.rend(); ++it) {
    if ((*it)->ptr == data && (*it)->size == bytes) {
      std::unique_ptr<gloo::transport::UnboundBuffer> buffer = std::move(*it);
      reusable_.erase(std::next(it).base());
      return buffer;
    }
  }
  return nullptr;
}

void OperationRegistry::set_prober(Prober prober) {
  std::lock_guard<std::mutex> lock(prober_mutex_);
  prober_ = std::move(prober);
}

void OperationRegistry::probe(const std::shared_ptr<Operation>& operation) {
  std::lock_guard<std::mutex> lock(prober_mutex_);
  if (prober_) prober_(operation);
}

std::vector<std::shared_ptr<Operation>> OperationRegistry::all() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<Operation>> operations;
  operations.reserve(in_flight_.size());
  for (auto& entry : in_flight_) operations.push_back(entry.second);
  return operations;
}

void OperationRegistry::clear() {
  std::unordered_map<const Operation*, std::shared_ptr<Operation>> released;
  std::deque<std::unique_ptr<gloo::transport::UnboundBuffer>> buffers;
  std::lock_guard<std::mutex> lock(mutex_);
  released.swap(in_flight_);
  buffers.swap(reusable_);
}

std::function<void()> OperationRegistry::remover(const std::shared_ptr<OperationRegistry>& registry,
                                                 const Operation* operation) {
  std::weak_ptr<OperationRegistry> weak = registry;
  return [weak, operation] {
    if (std::shared_ptr<OperationRegistry> alive = weak.lock()) alive->remove(operation);
  };
}

std::function<void()> GlooWork::release() const {
  return OperationRegistry::remover(registry_, operation_.get());
}

GlooWork::~GlooWork() {
  if (operation_->settled()) {
    registry_->remove(operation_.get());
  } else {
    // The registry keeps the operation (and the memory gloo writes to) until gloo is done.
    operation_->wait_in_background(*registry_, release());
  }
}

void GlooWork::wait(std::chrono::milliseconds timeout) {
  if (operation_->wait(timeout, *registry_)) return;
  on_timeout_->abort_on_timeout(operation_->describe_timeout(timeout));
}

bool GlooWork::test() {
  return operation_->test(*registry_, release());
}

}  // namespace baton_gloo

#include "operation.h"

#include "gloo_errors.h"

namespace baton_gloo {

namespace {

// gloo needs a valid address even for zero bytes; an empty tensor may have none.
char zero_byte_target;

// Deadline for gloo's own waits. Never reached: callers' timeouts are applied through the
// DeadlineTimer, and shutdown interrupts the waits.
constexpr std::chrono::milliseconds kNoDeadline = std::chrono::hours(24 * 30);

}  // namespace

Operation::Operation(int rank, baton::P2PDescription what, at::Tensor tensor, std::uint64_t slot)
    : rank_(rank),
      what_(what),
      slot_(slot),
      tensor_(std::move(tensor)),
      data_(what.bytes == 0 ? static_cast<void*>(&zero_byte_target) : tensor_.data_ptr()) {}

std::string Operation::name() const {
  return baton::rank_prefix(rank_) + what_.str();
}

void Operation::succeed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ != Status::kPending) return;
  status_ = Status::kSucceeded;
  done_.notify_all();
}

void Operation::fail(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ != Status::kPending) return;
  status_ = Status::kFailed;
  error_ = message;
  done_.notify_all();
}

void Operation::set_phase(Phase phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
}

bool Operation::settled() {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_ != Status::kPending;
}

bool Operation::try_claim_locked() {
  if (claimed_) return false;
  claimed_ = true;
  return true;
}

void Operation::interrupt() const {
  if (what_.direction == baton::P2PDirection::kSend) {
    payload->abortWaitSend();
  } else {
    payload->abortWaitRecv();
  }
}

bool Operation::wait_in_gloo() {
  bool completed = false;
  try {
    completed = what_.direction == baton::P2PDirection::kSend
                    ? payload->waitSend(nullptr, kNoDeadline)
                    : payload->waitRecv(nullptr, kNoDeadline);
  } catch (const std::exception& error) {
    fail(name() + " failed: " + explain_gloo_error(error, what_.peer));
    return true;
  }
  // An operation failed by abort() or a peer's failure stays failed: the first outcome wins.
  if (completed) succeed();
  return completed;
}

void Operation::throw_outcome_locked(std::chrono::milliseconds timeout) const {
  if (status_ == Status::kFailed) throw baton::TransportError(error_);
  std::string message = name() + " timed out after " + baton::format_seconds(timeout);
  if (phase_ == Phase::kAwaitingReceiver) {
    message += " (rank " + std::to_string(what_.peer) + " has not posted a receive for this tag)";
  }
  throw baton::TransportError(message);
}

void Operation::wait(std::chrono::milliseconds timeout, DeadlineTimer& timer) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (status_ == Status::kPending && try_claim_locked()) {
    lock.unlock();
    // Interrupting the gloo wait leaves the operation pending and the connections intact.
    const DeadlineTimer::Id deadline =
        timer.schedule(DeadlineTimer::Clock::now() + timeout, [this] { interrupt(); });
    wait_in_gloo();
    timer.cancel(deadline);
    lock.lock();
    claimed_ = false;
  } else {
    done_.wait_for(lock, timeout, [this] { return status_ != Status::kPending; });
  }
  if (status_ != Status::kSucceeded) throw_outcome_locked(timeout);
}

void Operation::wait_in_background(WaiterPool& waiters, const std::function<void()>& on_settled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_ != Status::kPending || !try_claim_locked()) return;
  }
  waiters.run([self = shared_from_this(), on_settled] {
    // Only a caller's deadline interrupts a pending operation, and callers do not wait while
    // the claim is here; abort() and failures settle the operation before interrupting.
    while (!self->wait_in_gloo() && !self->settled()) {
    }
    on_settled();
  });
}

bool Operation::test(WaiterPool& waiters, const std::function<void()>& on_settled) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_ == Status::kFailed) throw baton::TransportError(error_);
    if (status_ == Status::kSucceeded) return true;
  }
  wait_in_background(waiters, on_settled);
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
  std::shared_ptr<Operation> last;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = in_flight_.find(operation);
  if (found == in_flight_.end()) return;
  last = std::move(found->second);
  in_flight_.erase(found);
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
  std::lock_guard<std::mutex> lock(mutex_);
  released.swap(in_flight_);
}

std::function<void()> GlooWork::release() const {
  std::weak_ptr<OperationRegistry> registry = registry_;
  const Operation* operation = operation_.get();
  return [registry, operation] {
    if (std::shared_ptr<OperationRegistry> alive = registry.lock()) alive->remove(operation);
  };
}

GlooWork::~GlooWork() {
  if (operation_->settled()) {
    registry_->remove(operation_.get());
  } else {
    // The registry keeps the operation (and the memory gloo writes to) until gloo is done.
    operation_->wait_in_background(registry_->waiters, release());
  }
}

void GlooWork::wait(std::chrono::milliseconds timeout) {
  operation_->wait(timeout, registry_->timer);
}

bool GlooWork::test() {
  return operation_->test(registry_->waiters, release());
}

}  // namespace baton_gloo

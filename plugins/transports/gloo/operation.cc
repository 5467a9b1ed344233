#include "operation.h"

namespace baton_gloo {

namespace {

// gloo needs a valid address even for zero bytes; an empty tensor may have none.
char zero_byte_target;

}  // namespace

Operation::Operation(int rank, baton::P2PDescription what, at::Tensor tensor)
    : rank_(rank),
      what_(what),
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

void Operation::throw_failure() const {
  throw baton::TransportError(error_);
}

void Operation::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool finished =
      done_.wait_for(lock, timeout, [this] { return status_ != Status::kPending; });
  if (!finished) {
    std::string message = name() + " timed out after " + baton::format_seconds(timeout);
    if (phase_ == Phase::kAwaitingAnnouncement) {
      message += " (rank " + std::to_string(what_.peer) + " has not sent a message with this tag)";
    }
    throw baton::TransportError(message);
  }
  if (status_ == Status::kFailed) throw_failure();
}

bool Operation::settled_by(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  return done_.wait_until(lock, deadline, [this] { return status_ != Status::kPending; });
}

bool Operation::test() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ == Status::kFailed) throw_failure();
  return status_ == Status::kSucceeded;
}

}  // namespace baton_gloo

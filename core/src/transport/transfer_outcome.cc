#include "baton/transfer_outcome.h"

#include <utility>

namespace baton {

TransferOutcome::TransferOutcome(int rank, P2PDescription what) : rank_(rank), what_(what) {}

std::string TransferOutcome::name() const {
  return rank_prefix(rank_) + what_.str();
}

void Outcome::succeed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ != Status::kPending) return;
  status_ = Status::kSucceeded;
  done_.notify_all();
}

void Outcome::fail(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ != Status::kPending) return;
  status_ = Status::kFailed;
  error_ = message;
  done_.notify_all();
}

bool Outcome::settled() {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_ != Status::kPending;
}

bool Outcome::test() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ == Status::kFailed) throw TransportError(error_);
  return status_ == Status::kSucceeded;
}

bool Outcome::wait_for(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_.wait_for(lock, timeout, [this] { return status_ != Status::kPending; })) return false;
  if (status_ == Status::kFailed) throw TransportError(error_);
  return true;
}

std::string TransferOutcome::timeout_message(std::chrono::milliseconds timeout) const {
  return name() + " timed out after " + format_seconds(timeout);
}

void TransportAbortHandle::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (transport_ != nullptr) transport_->abort(reason);
}

void TransportAbortHandle::abort_on_timeout(const std::string& message) {
  // The runtime ends a run at its first timeout: the transport aborts, so that everything
  // else pending fails now naming why, and the peers hear of it (docs/writing-a-transport.md).
  abort(message);
  throw TransportError(message);
}

void TransportAbortHandle::detach() {
  std::lock_guard<std::mutex> lock(mutex_);
  transport_ = nullptr;
}

}  // namespace baton

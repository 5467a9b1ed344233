#include "operation.h"

#include <algorithm>

#include "progress_engine.h"

namespace baton_ucx {

namespace {

// UCX needs a valid address even for zero bytes; an empty tensor may have none.
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

void Operation::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_.wait_for(lock, timeout, [this] { return status_ != Status::kPending; })) {
    throw baton::TransportError(name() + " timed out after " + baton::format_seconds(timeout));
  }
  if (status_ == Status::kFailed) throw baton::TransportError(error_);
}

bool Operation::settled() {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_ != Status::kPending;
}

bool Operation::test() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_ == Status::kFailed) throw baton::TransportError(error_);
  return status_ == Status::kSucceeded;
}

void UcxWork::wait(std::chrono::milliseconds timeout) {
  if (operation_->test()) return;
  if (std::shared_ptr<ProgressEngine> engine = engine_.lock()) {
    const auto budget = std::min<std::chrono::microseconds>(poll_budget_, timeout);
    if (budget.count() > 0 && engine->poll_until([this] { return operation_->settled(); }, budget))
      return operation_->wait(timeout);  // settled: returns or throws at once
    engine->poke();
  }
  operation_->wait(timeout);
}

}  // namespace baton_ucx

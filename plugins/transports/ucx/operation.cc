#include "operation.h"

#include <algorithm>

#include "progress_engine.h"

namespace baton_ucx {

namespace {

// UCX needs a valid address even for zero bytes; an empty tensor may have none.
char zero_byte_target;

}  // namespace

Operation::Operation(int rank, baton::P2PDescription what, at::Tensor tensor)
    : TransferOutcome(rank, what),
      tensor_(std::move(tensor)),
      data_(what.bytes == 0 ? static_cast<void*>(&zero_byte_target) : tensor_.data_ptr()),
      cuda_(tensor_.is_cuda()) {}

void UcxWork::wait(std::chrono::milliseconds timeout) {
  if (operation_->test()) return;
  if (std::shared_ptr<ProgressEngine> engine = engine_.lock()) {
    const auto budget = std::min<std::chrono::microseconds>(poll_budget_, timeout);
    if (budget.count() > 0 &&
        engine->poll_until([this] { return operation_->settled(); }, budget)) {
      operation_->test();  // settled: throws when it failed
      return;
    }
    engine->poke();
  }
  if (operation_->wait_for(timeout)) return;
  on_timeout_->abort_on_timeout(operation_->timeout_message(timeout));
}

}  // namespace baton_ucx

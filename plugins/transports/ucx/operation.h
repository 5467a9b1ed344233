// One send or receive: its outcome, and the wait on it. Shared by the caller's Work and the
// transport's registry of requests in flight, which keeps the tensor (the memory UCX reads
// or writes) alive until UCX is done with it, even when the caller dropped its Work.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>

#include "baton/transfer_outcome.h"
#include "baton/transport.h"

namespace baton_ucx {

class ProgressEngine;

class Operation : public baton::TransferOutcome {
 public:
  Operation(int rank, baton::P2PDescription what, at::Tensor tensor);

  // Where UCX reads or writes; valid (never null) even for zero bytes.
  void* data() const { return data_; }
  bool is_cuda() const { return cuda_; }
  // UCX is done with the memory (the request completed): the tensor is the caller's alone
  // from here on, even while this operation is still registered (the runtime reuses a
  // receive buffer only when nothing else refers to it).
  void let_go_of_memory() { tensor_ = at::Tensor(); }

 private:
  at::Tensor tensor_;
  void* const data_;
  const bool cuda_;
};

// What isend()/irecv() return. Waiting pokes the progress engine (poll now, this rank
// is waiting); the engine may be gone when the Work outlives the transport. A wait that
// times out aborts the transport with that reason.
class UcxWork : public baton::Work {
 public:
  UcxWork(std::shared_ptr<Operation> operation, std::weak_ptr<ProgressEngine> engine,
          std::chrono::microseconds poll_budget,
          std::shared_ptr<baton::TransportAbortHandle> on_timeout)
      : operation_(std::move(operation)),
        engine_(std::move(engine)),
        poll_budget_(poll_budget),
        on_timeout_(std::move(on_timeout)) {}
  void wait(std::chrono::milliseconds timeout) override;
  bool test() override { return operation_->test(); }

 private:
  std::shared_ptr<Operation> operation_;
  std::weak_ptr<ProgressEngine> engine_;
  std::chrono::microseconds poll_budget_;  // polled by the caller before it sleeps
  std::shared_ptr<baton::TransportAbortHandle> on_timeout_;
};

}  // namespace baton_ucx

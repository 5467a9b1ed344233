// One send or receive: its outcome, and the wait on it. Shared by the caller's Work and the
// transport's registry of requests in flight, which keeps the tensor (the memory UCX reads
// or writes) alive until UCX is done with it, even when the caller dropped its Work.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "baton/transport.h"
#include "baton/transport_support.h"

namespace baton_ucx {

class ProgressEngine;

class Operation {
 public:
  Operation(int rank, baton::P2PDescription what, at::Tensor tensor);

  const baton::P2PDescription& what() const { return what_; }
  // "rank 1: recv from rank 0 (tag 0x10002, 4194304 bytes)"
  std::string name() const;
  // Where UCX reads or writes; valid (never null) even for zero bytes.
  void* data() const { return data_; }
  bool is_cuda() const { return tensor_.is_cuda(); }

  // The first outcome wins; later ones are ignored (an abort racing a completion).
  void succeed();
  void fail(const std::string& message);

  // Blocks until done or `timeout`; throws TransportError on failure or timeout.
  void wait(std::chrono::milliseconds timeout);
  // True when done; throws when failed.
  bool test();
  // True once it succeeded or failed; never throws.
  bool settled();

 private:
  enum class Status { kPending, kSucceeded, kFailed };

  const int rank_;
  const baton::P2PDescription what_;
  const at::Tensor tensor_;
  void* const data_;

  std::mutex mutex_;
  std::condition_variable done_;
  Status status_ = Status::kPending;
  std::string error_;
};

// What isend()/irecv() return. Waiting pokes the progress engine (poll now, this rank
// is waiting); the engine may be gone when the Work outlives the transport.
class UcxWork : public baton::Work {
 public:
  UcxWork(std::shared_ptr<Operation> operation, std::weak_ptr<ProgressEngine> engine,
          std::chrono::microseconds poll_budget)
      : operation_(std::move(operation)), engine_(std::move(engine)), poll_budget_(poll_budget) {}
  void wait(std::chrono::milliseconds timeout) override;
  bool test() override { return operation_->test(); }

 private:
  std::shared_ptr<Operation> operation_;
  std::weak_ptr<ProgressEngine> engine_;
  std::chrono::microseconds poll_budget_;  // polled by the caller before it sleeps
};

}  // namespace baton_ucx

// The NCCL communicator shared by a transport and its Works, and one transfer's completion.
//
// NCCL cannot cancel a single transfer: a Work that times out aborts the whole communicator
// (ncclCommAbort), and every other pending and future operation then fails with that
// reason. Completion is a CUDA event recorded on the transfer's stream after the NCCL call;
// wait() polls it (cudaEventQuery) with a growing pause, and NCCL's asynchronous error state
// with it, so a failing peer is reported instead of waited out.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "baton/transport.h"
#include "baton/transport_support.h"

namespace baton_nccl {

class Communicator {
 public:
  Communicator(ncclComm_t comm, int device, int rank);
  // Frees the communicator: aborted ones are already gone; live ones are aborted too,
  // because a clean destroy would wait for transfers a peer may never match.
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int device() const { return device_; }
  int rank() const { return rank_; }
  // Serializes calls into NCCL on this communicator.
  std::mutex& mutex() { return mutex_; }
  // Null once aborted; then failure_locked() says why.
  ncclComm_t handle_locked() const { return comm_; }
  const std::string& failure_locked() const { return failure_; }

  // Aborts the communicator once; the first reason is kept. Safe from any thread.
  void abort(const std::string& reason);
  // Why the communicator is unusable; empty while it works.
  std::string failure();
  // Asks NCCL for an asynchronous error (a peer failed, a network error); on one, aborts
  // with its text. Returns the failure, empty when none.
  std::string check_async_error();

 private:
  void abort_locked(const std::string& reason);

  std::mutex mutex_;
  ncclComm_t comm_;
  const int device_;
  const int rank_;
  bool aborted_ = false;
  std::string failure_;
};

// One posted send or receive: the event that completes it and the tensor NCCL reads or
// writes, kept alive (by the transport too) until the event has completed, and let go of by
// completed() as soon as it has (the runtime reuses a receive buffer only when nothing else
// refers to it). A transfer is tested by one thread at a time.
struct Transfer {
  Transfer(std::shared_ptr<Communicator> communicator, baton::P2PDescription what,
           at::Tensor tensor);
  ~Transfer();
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // True once the event completed; throws TransportError when the communicator failed.
  bool completed();
  std::string name() const;

  std::shared_ptr<Communicator> communicator;
  const baton::P2PDescription what;
  at::Tensor tensor;
  cudaEvent_t event = nullptr;
};

class NcclWork : public baton::Work {
 public:
  explicit NcclWork(std::shared_ptr<Transfer> transfer) : transfer_(std::move(transfer)) {}
  // On timeout, aborts the communicator (see above) and says so.
  void wait(std::chrono::milliseconds timeout) override;
  bool test() override { return transfer_->completed(); }

 private:
  std::shared_ptr<Transfer> transfer_;
};

}  // namespace baton_nccl

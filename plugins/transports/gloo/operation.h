// One send or receive in flight, shared by the caller's Work, the waiter thread and the
// transport's registry (which keeps it, and the memory gloo writes to, alive until gloo is
// done with it, even when the caller dropped its Work).
#pragma once

#include <ATen/core/Tensor.h>
#include <gloo/transport/unbound_buffer.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "baton/transport.h"
#include "baton/transport_support.h"
#include "wire.h"

namespace baton_gloo {

class Operation {
 public:
  enum class Phase {
    kAwaitingAnnouncement,  // a receive whose sender has not announced the message yet
    kTransferring,          // posted to gloo
  };

  Operation(int rank, baton::P2PDescription what, at::Tensor tensor);

  const baton::P2PDescription& what() const { return what_; }
  // "rank 1: recv from rank 0 (tag 0x10002, 4194304 bytes)"
  std::string name() const;
  void* data() const { return data_; }

  // The first outcome wins; later ones are ignored (an abort racing a completion).
  void succeed();
  void fail(const std::string& message);
  void set_phase(Phase phase);

  // Blocks until done or `timeout`; throws TransportError on failure or timeout.
  void wait(std::chrono::milliseconds timeout);
  // True when done; throws when failed.
  bool test();
  // Waits until the operation succeeded or failed, or `deadline`; never throws.
  bool settled_by(std::chrono::steady_clock::time_point deadline);

  // gloo state, owned here so that it lives exactly as long as the operation. The payload
  // buffer is declared after the tensor: it is destroyed first, while its memory is valid.
  std::unique_ptr<gloo::transport::UnboundBuffer> payload;
  Announcement announcement;  // sends: what goes on the control slot
  std::unique_ptr<gloo::transport::UnboundBuffer> announce_buffer;

 private:
  enum class Status { kPending, kSucceeded, kFailed };

  [[noreturn]] void throw_failure() const;

  const int rank_;
  const baton::P2PDescription what_;
  const at::Tensor tensor_;  // keeps the memory alive while gloo may touch it
  void* const data_;

  std::mutex mutex_;
  std::condition_variable done_;
  Status status_ = Status::kPending;
  Phase phase_ = Phase::kTransferring;
  std::string error_;
};

// What isend()/irecv() return.
class GlooWork : public baton::Work {
 public:
  explicit GlooWork(std::shared_ptr<Operation> operation) : operation_(std::move(operation)) {}
  void wait(std::chrono::milliseconds timeout) override { operation_->wait(timeout); }
  bool test() override { return operation_->test(); }

 private:
  std::shared_ptr<Operation> operation_;
};

}  // namespace baton_gloo

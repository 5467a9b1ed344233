// One send or receive, shared by the caller's Work, the transport's registry of operations
// in flight (which keeps it, and the memory gloo writes to, alive until gloo is done with it,
// even when the caller dropped its Work) and at most one thread waiting in gloo for it.
//
// Waiting: gloo offers no completion callback and no non-blocking test, so someone must sit
// in gloo's blocking wait. The caller's wait() does it itself (one wake-up from gloo's I/O
// thread to the caller, as with raw gloo), bounded by the transport's DeadlineTimer; test()
// and a Work dropped early hand the wait to a pool thread instead. Whoever holds the claim
// is the only one in gloo's wait; everyone else waits for the outcome.
#pragma once

#include <ATen/core/Tensor.h>
#include <gloo/transport/unbound_buffer.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/transport.h"
#include "baton/transport_support.h"
#include "deadline_timer.h"
#include "waiter_pool.h"

namespace baton_gloo {

class Operation : public std::enable_shared_from_this<Operation> {
 public:
  enum class Phase {
    kAwaitingReceiver,  // a send whose receiver has not posted the matching receive yet
    kTransferring,      // posted to gloo
  };

  Operation(int rank, baton::P2PDescription what, at::Tensor tensor, std::uint64_t slot);

  const baton::P2PDescription& what() const { return what_; }
  std::uint64_t slot() const { return slot_; }
  // "rank 1: recv from rank 0 (tag 0x10002, 4194304 bytes)"
  std::string name() const;
  void* data() const { return data_; }

  // The first outcome wins; later ones are ignored (an abort racing a completion).
  void succeed();
  void fail(const std::string& message);
  void set_phase(Phase phase);
  bool settled();

  // Blocks until done or `timeout`; throws TransportError on failure or timeout.
  void wait(std::chrono::milliseconds timeout, DeadlineTimer& timer);
  // True when done; throws when failed. Hands the gloo wait to `waiters` when nobody waits.
  bool test(WaiterPool& waiters, const std::function<void()>& on_settled);
  // Makes sure someone waits for the outcome (a Work dropped before its operation ended).
  void wait_in_background(WaiterPool& waiters, const std::function<void()>& on_settled);
  // Waits until the operation succeeded or failed, or `deadline`; never throws.
  bool settled_by(std::chrono::steady_clock::time_point deadline);
  // Interrupts a thread waiting in gloo for this operation (or the next one to wait).
  void interrupt() const;

  // gloo's buffer for the payload. Declared after the tensor: it is destroyed first, while
  // its memory is valid.
  std::unique_ptr<gloo::transport::UnboundBuffer> payload;

 private:
  enum class Status { kPending, kSucceeded, kFailed };

  // With the claim held: waits in gloo without a deadline and records the outcome (true) or
  // returns false when interrupted with the operation still pending.
  bool wait_in_gloo();
  bool try_claim_locked();
  [[noreturn]] void throw_outcome_locked(std::chrono::milliseconds timeout) const;

  const int rank_;
  const baton::P2PDescription what_;
  const std::uint64_t slot_;
  const at::Tensor tensor_;  // keeps the memory alive while gloo may touch it
  void* const data_;

  std::mutex mutex_;
  std::condition_variable done_;
  Status status_ = Status::kPending;
  Phase phase_ = Phase::kTransferring;
  bool claimed_ = false;  // a thread is in (or about to enter) gloo's wait
  std::string error_;
};

// The operations in flight, shared by the transport and its Works (a Work may outlive the
// transport), with the timer and the waiter pool they use.
class OperationRegistry {
 public:
  void add(const std::shared_ptr<Operation>& operation);
  void remove(const Operation* operation);
  std::vector<std::shared_ptr<Operation>> all();
  void clear();

  DeadlineTimer timer;
  WaiterPool waiters;

 private:
  std::mutex mutex_;
  std::unordered_map<const Operation*, std::shared_ptr<Operation>> in_flight_;
};

// What isend()/irecv() return.
class GlooWork : public baton::Work {
 public:
  GlooWork(std::shared_ptr<Operation> operation, std::shared_ptr<OperationRegistry> registry)
      : operation_(std::move(operation)), registry_(std::move(registry)) {}
  ~GlooWork() override;
  void wait(std::chrono::milliseconds timeout) override;
  bool test() override;

 private:
  std::function<void()> release() const;

  std::shared_ptr<Operation> operation_;
  std::shared_ptr<OperationRegistry> registry_;
};

}  // namespace baton_gloo

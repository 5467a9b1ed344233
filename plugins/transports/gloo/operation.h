// One send or receive, shared by the caller's Work, the transport's registry of operations
// in flight (which keeps it, and the memory gloo writes to, alive until gloo is done with it,
// even when the caller dropped its Work) and at most one thread waiting in gloo for it.
//
// Waiting: gloo offers no completion callback and no non-blocking test, so someone must sit
// in gloo's blocking wait. The caller's wait() does it itself (one wake-up from gloo's I/O
// thread to the caller, as with raw gloo), bounded by the transport's DeadlineTimer; test()
// and a Work dropped early hand the wait to a pool thread instead. Whoever holds the claim
// is the only one in gloo's wait; everyone else waits for the outcome. Whoever waits also
// sends the operation's probe when it is due (see wire.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <gloo/transport/unbound_buffer.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/transfer_outcome.h"
#include "baton/transport.h"
#include "deadline_timer.h"
#include "waiter_pool.h"

namespace baton_gloo {

class OperationRegistry;

class Operation : public baton::TransferOutcome, public std::enable_shared_from_this<Operation> {
 public:
  using Clock = std::chrono::steady_clock;

  enum class Phase {
    kAwaitingChannel,  // a receive whose sender has not said which channel its tag uses
    kPosted,           // posted to gloo
  };

  // `probe_at`: when a still pending operation tells the peer its size (max: never).
  Operation(int rank, baton::P2PDescription what, at::Tensor tensor, std::uint64_t sequence,
            Clock::time_point probe_at);

  std::uint64_t sequence() const { return sequence_; }
  void* data() const { return data_; }

  // True the first time: the caller reports this operation's size mismatch.
  bool begin_reporting_mismatch();
  void set_phase(Phase phase);
  // The gloo buffer, for another operation on the same memory, once this one succeeded
  // (gloo is done with it and its counters are back to zero); null otherwise.
  std::unique_ptr<gloo::transport::UnboundBuffer> take_reusable_payload();

  // Blocks until done (true) or `timeout` (false); throws TransportError on failure.
  bool wait(std::chrono::milliseconds timeout, OperationRegistry& registry);
  // What a wait that timed out says: the operation, the timeout, and what the peer has not
  // done yet when that is known.
  std::string describe_timeout(std::chrono::milliseconds timeout);
  // True when done; throws when failed. Hands the gloo wait to the registry's waiter pool
  // when nobody waits.
  bool test(OperationRegistry& registry, const std::function<void()>& on_settled);
  // Makes sure someone waits for the outcome (a Work dropped before its operation ended).
  void wait_in_background(OperationRegistry& registry, const std::function<void()>& on_settled);
  // Waits until the operation succeeded or failed, or `deadline`; never throws.
  bool settled_by(std::chrono::steady_clock::time_point deadline);
  // Interrupts a thread waiting in gloo for this operation (or the next one to wait).
  void interrupt();

  // gloo's buffer for the payload. Declared after the tensor: it is destroyed first, while
  // its memory is valid (a buffer whose transfer succeeded no longer touches it, and may be
  // kept for reuse: take_reusable_payload()).
  std::unique_ptr<gloo::transport::UnboundBuffer> payload;

 private:
  // With the claim held: waits in gloo without a deadline and records the outcome (true) or
  // returns false when interrupted with the operation still pending.
  bool wait_in_gloo();
  // With the claim held: waits in gloo until the operation ends (true) or `deadline` (false),
  // sending the probe on the way when it is due.
  bool wait_claimed(Clock::time_point deadline, OperationRegistry& registry);
  bool try_claim_locked();

  const std::uint64_t sequence_;
  const Clock::time_point probe_at_;
  bool probed_ = false;  // only the claim holder touches it
  at::Tensor tensor_;    // keeps the memory alive while gloo may touch it (until it succeeded)
  void* const data_;

  // Guarded by TransferOutcome's mutex_, with the outcome.
  Phase phase_ = Phase::kPosted;
  bool claimed_ = false;  // a thread is in (or about to enter) gloo's wait
  bool reporting_mismatch_ = false;
};

// The operations in flight, shared by the transport and its Works (a Work may outlive the
// transport), with the timer and the waiter pool they use.
class OperationRegistry {
 public:
  using Prober = std::function<void(const std::shared_ptr<Operation>&)>;

  void add(const std::shared_ptr<Operation>& operation);
  // Forgets a settled operation; keeps its gloo buffer for reuse when it succeeded.
  void remove(const Operation* operation);
  std::vector<std::shared_ptr<Operation>> all();
  void clear();

  // A gloo buffer of an earlier operation on exactly this memory, or null. Pipelines send
  // and receive the same preallocated tensors every step; reusing their buffers saves
  // creating and destroying one per message, as raw gloo users do.
  std::unique_ptr<gloo::transport::UnboundBuffer> reuse_buffer(const void* data, std::size_t bytes);

  // Who tells the peer an operation's size when its probe is due; null: nobody (the
  // transport is gone).
  void set_prober(Prober prober);
  void probe(const std::shared_ptr<Operation>& operation);

  // What a background wait runs when `operation` settles: removes it from `registry` if
  // the registry still exists (a Work may outlive the transport).
  static std::function<void()> remover(const std::shared_ptr<OperationRegistry>& registry,
                                       const Operation* operation);

  DeadlineTimer timer;
  WaiterPool waiters;

 private:
  // Buffers kept for reuse, oldest first; a few dozen are enough for a pipeline stage.
  static constexpr std::size_t kReusableBuffers = 64;

  std::mutex mutex_;
  std::unordered_map<const Operation*, std::shared_ptr<Operation>> in_flight_;
  std::deque<std::unique_ptr<gloo::transport::UnboundBuffer>> reusable_;
  std::mutex prober_mutex_;  // held while probing: set_prober(nullptr) waits for a probe
  Prober prober_;
};

// What isend()/irecv() return. A wait that times out aborts the transport with that reason.
class GlooWork : public baton::Work {
 public:
  GlooWork(std::shared_ptr<Operation> operation, std::shared_ptr<OperationRegistry> registry,
           std::shared_ptr<baton::TransportAbortHandle> on_timeout)
      : operation_(std::move(operation)),
        registry_(std::move(registry)),
        on_timeout_(std::move(on_timeout)) {}
  ~GlooWork() override;
  void wait(std::chrono::milliseconds timeout) override;
  bool test() override;

 private:
  std::function<void()> release() const;

  std::shared_ptr<Operation> operation_;
  std::shared_ptr<OperationRegistry> registry_;
  std::shared_ptr<baton::TransportAbortHandle> on_timeout_;
};

}  // namespace baton_gloo

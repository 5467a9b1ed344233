// The part of a send or receive every transport has: its outcome, set once, and the waits on
// it. A transport's own operation class derives from it and keeps its library's state beside
// it (under the same lock when it must change with the outcome).
//
// And what a Work does when a wait times out: the runtime ends a run at its first timeout
// and never retries, so the contract (docs/writing-a-transport.md) is that the timeout
// aborts the transport with the timeout as the reason; TransportAbortHandle lets a Work,
// which may outlive its transport, do that.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "baton/export.h"
#include "baton/transport.h"
#include "baton/transport_support.h"

namespace baton {

// An operation's outcome, set once, and the waits on it: what a transfer and a collective
// (baton/collective_queue.h) share.
class BATON_API Outcome {
 public:
  Outcome() = default;
  Outcome(const Outcome&) = delete;
  Outcome& operator=(const Outcome&) = delete;

  // The first outcome wins; later ones are ignored (an abort racing a completion).
  void succeed();
  void fail(const std::string& message);
  // True once it succeeded or failed; never throws.
  bool settled();
  // True when done; throws TransportError when failed.
  bool test();
  // Blocks until settled (true) or `timeout` (false); throws TransportError when failed.
  bool wait_for(std::chrono::milliseconds timeout);

 protected:
  enum class Status { kPending, kSucceeded, kFailed };

  // Guards the outcome, and whatever a derived operation keeps with it.
  std::mutex mutex_;
  std::condition_variable done_;  // notified when the outcome is set
  Status status_ = Status::kPending;
  std::string error_;
};

// The outcome of one send or receive, named by it.
class BATON_API TransferOutcome : public Outcome {
 public:
  TransferOutcome(int rank, P2PDescription what);

  const P2PDescription& what() const { return what_; }
  // "rank 1: recv from rank 0 (tag 0x10002, 4194304 bytes)"
  std::string name() const;
  // "rank 1: recv from rank 0 (tag 0x7, 16 bytes) timed out after 0.5 s"
  std::string timeout_message(std::chrono::milliseconds timeout) const;

 private:
  const int rank_;
  const P2PDescription what_;
};

class BATON_API TransportAbortHandle {
 public:
  explicit TransportAbortHandle(Transport* transport) : transport_(transport) {}
  // Aborts the transport with `reason`, unless it is gone.
  void abort(const std::string& reason);
  // What a Work's wait does when it times out: aborts the transport with `message` (the
  // operation and its timeout), then throws TransportError(message).
  [[noreturn]] void abort_on_timeout(const std::string& message);
  // From the transport's destructor: later abort() calls do nothing; one under way finishes
  // first.
  void detach();

 private:
  std::mutex mutex_;
  Transport* transport_;
};

}  // namespace baton

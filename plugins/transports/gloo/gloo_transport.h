// baton's Transport over gloo's TCP transport: a full mesh of connections, point-to-point
// transfers with unbound buffers (one per operation: a buffer allows one pending operation),
// one gloo slot per message, and sizes agreed before any byte lands (see wire.h).
//
// Threads: callers post and wait (a caller's wait sits in gloo's own wait, see operation.h);
// one reader thread per peer handles that peer's control messages; a timer bounds waits;
// a small pool waits for operations that callers only test() or dropped.
#pragma once

#include <gloo/rendezvous/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "baton/transport.h"
#include "operation.h"
#include "wire.h"

namespace baton_gloo {

struct GlooOptions {
  std::string interface;  // empty: listen on `address`
  std::string address = "127.0.0.1";
  // How long connect() waits for peers; zero: TransportContext::timeout.
  std::chrono::milliseconds connect_timeout{0};
};

class GlooTransport : public baton::Transport {
 public:
  // Creates gloo's TCP device; throws TransportError when the address or interface is
  // unusable.
  explicit GlooTransport(const GlooOptions& options);
  ~GlooTransport() override;

  void connect(const baton::TransportContext& ctx) override;
  std::unique_ptr<baton::Work> isend(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override;
  std::unique_ptr<baton::Work> irecv(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override;
  void abort(const std::string& reason) override;

 private:
  // Control receives kept posted per peer: that many control messages can be under way to
  // this rank before a sender has to wait for the reader to take one.
  static constexpr std::size_t kControlReceives = 8;

  struct PeerLink {
    std::array<ControlMessage, kControlReceives> incoming{};
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> control_receives;
    std::thread reader;
    std::string failure;  // why the connection is gone; empty while it works
    // Sequence numbers of the next send and receive, per tag (see wire.h).
    std::unordered_map<std::uint64_t, std::uint64_t> next_send;
    std::unordered_map<std::uint64_t, std::uint64_t> next_recv;
    // Receives the peer posted (slot -> bytes) that no send of this rank claimed yet, and
    // sends of this rank waiting for the peer's receive (slot -> operation).
    std::unordered_map<std::uint64_t, std::uint64_t> posted_by_peer;
    std::unordered_map<std::uint64_t, std::shared_ptr<Operation>> awaiting_receiver;

    std::mutex control_send_mutex;  // one control message at a time goes to this peer
    ControlMessage outgoing;
    std::unique_ptr<gloo::transport::UnboundBuffer> control_send;
  };

  // Checks the arguments; throws TransportError naming the operation.
  baton::P2PDescription describe(const at::Tensor& tensor, int peer, std::uint64_t tag,
                                 baton::P2PDirection direction) const;
  void throw_if_unusable_locked(const baton::P2PDescription& what) const;
  // The `sequence`-th operation of its (peer, tag, direction), registered as in flight.
  std::shared_ptr<Operation> new_operation_locked(const baton::P2PDescription& what,
                                                  const at::Tensor& tensor, std::uint64_t sequence);
  // Posts the payload of a send whose receive is posted with `receive_bytes`; when the sizes
  // differ the send completes unsent and the receiver is told. Not under mutex_.
  void start_send(const std::shared_ptr<Operation>& operation, std::uint64_t receive_bytes);
  void send_control(int peer, const ControlMessage& message);
  void report_size_mismatch(const Operation& send);

  void read_control_messages(int peer);
  void on_receive_posted(int peer, const ControlMessage& message);
  void on_size_mismatch(int peer, const ControlMessage& message);
  void on_peer_failure(int peer, const std::string& reason);
  void fail_everything(const std::string& suffix);

  const GlooOptions options_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::shared_ptr<OperationRegistry> registry_ = std::make_shared<OperationRegistry>();
  int rank_ = -1;
  int world_size_ = 0;
  std::chrono::milliseconds timeout_{60000};

  std::mutex mutex_;  // guards everything below and the PeerLinks' matching state
  bool aborted_ = false;
  std::string abort_reason_;
  bool closing_ = false;
  std::vector<std::unique_ptr<PeerLink>> links_;  // by peer rank; null for this rank
};

}  // namespace baton_gloo

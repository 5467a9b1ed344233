// baton's Transport over gloo's TCP transport: a full mesh of connections, point-to-point
// transfers with unbound buffers (one per operation: a buffer allows one pending operation),
// tags mapped to gloo slots, and sizes checked before any byte lands (see wire.h).
#pragma once

#include <gloo/rendezvous/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "baton/transport.h"
#include "operation.h"
#include "waiter_pool.h"
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
  // The receiving side of one peer's announcements (see wire.h).
  struct PeerLink {
    Announcement incoming;
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;  // receives `incoming`
    std::thread reader;
    std::string failure;  // why the connection is gone; empty while it works
    // Announced sizes no irecv() claimed yet, and irecv()s not announced yet, per tag.
    std::unordered_map<std::uint64_t, std::deque<std::uint64_t>> unclaimed;
    std::unordered_map<std::uint64_t, std::deque<std::shared_ptr<Operation>>> waiting;
  };

  std::shared_ptr<Operation> prepare(const at::Tensor& tensor, int peer, std::uint64_t tag,
                                     baton::P2PDirection direction);
  void throw_if_stopped_locked(const Operation& operation) const;

  void read_announcements(int peer);
  void on_announcement(int peer, const Announcement& announcement);
  void on_peer_failure(int peer, const std::string& reason);

  // Posts the payload receive once its announcement matched; all under mutex_.
  void start_recv_locked(const std::shared_ptr<Operation>& operation, std::uint64_t announced);
  void drain_locked(int peer, std::uint64_t tag, std::uint64_t bytes);
  void watch_locked(const std::shared_ptr<Operation>& operation);
  void interrupt(const Operation& operation) const;

  const GlooOptions options_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  int rank_ = -1;
  int world_size_ = 0;

  std::mutex mutex_;  // guards everything below and orders posts to gloo
  bool aborted_ = false;
  std::string abort_reason_;
  bool closing_ = false;
  std::vector<std::unique_ptr<PeerLink>> links_;  // by peer rank; null for this rank
  std::unordered_map<const Operation*, std::shared_ptr<Operation>> in_flight_;

  WaiterPool waiters_;
};

}  // namespace baton_gloo

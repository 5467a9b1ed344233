// baton's Transport over UCX's tag API (UCP): one worker per transport, one endpoint per
// peer created from the worker addresses published in the run's store, tags laid out as in
// tag_layout.h, and a progress thread that sleeps on the worker's wake-up fd when there is
// nothing to poll (progress_engine.h).
//
// Threading: every UCX call — posts from caller threads, progress and callbacks on the
// progress thread, teardown — runs under the engine's one mutex, which also guards this
// class's state. UCX callbacks only record outcomes; work that must not run inside a
// callback (cancelling the receives of a peer that failed) is deferred to after_progress().
// Callers never progress UCX themselves: Work::wait() pokes the engine and sleeps on the
// operation's condition variable.
//
// Notices: UCX 1.13 does not reliably tell a peer that this rank closed its endpoints, so
// abort() and the destructor send every peer a notice (on kControlTag) first; each rank keeps
// one receive posted for notices from any peer and fails its operations with that peer when
// one arrives ("peer rank 0 closed the connection: it aborted (…)"), instead of at their
// timeouts. Endpoints are closed by force: sends are synchronous (complete once matched), so
// nothing that completed is still on its way.
#pragma once

#include <ucp/api/ucp.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/all_reduce.h"
#include "baton/collective_queue.h"
#include "baton/joined_groups.h"
#include "baton/ring_all_reduce.h"
#include "baton/shard_collectives.h"
#include "baton/transfer_outcome.h"
#include "baton/transport.h"
#include "operation.h"
#include "peer_process_watch.h"
#include "progress_engine.h"
#include "worker.h"

namespace baton_ucx {

struct UcxOptions {
  // How long connect() waits for the peers; zero: TransportContext::timeout.
  std::chrono::milliseconds connect_timeout{0};
  // How long the progress thread keeps polling after activity before it sleeps.
  std::chrono::microseconds poll_window{100};
  // How long a caller's wait() polls UCX itself before it sleeps.
  std::chrono::microseconds wait_poll{200};
  // A peer that dies fails the operations with it at once (see the plugin's
  // peer_failure_detection): a peer on this machine by watching its process, so that shared
  // memory stays usable; any other through UCP_ERR_HANDLING_MODE_PEER.
  bool detect_peer_failure = true;
  // UCX's NET_DEVICES unless UCX_NET_DEVICES is set; empty: UCX's default.
  std::string net_devices;
  // UCX transports left out unless UCX_TLS is set (Worker): with detect_peer_failure, CMA —
  // UCX 1.13 ends the process when it cannot read a dead peer's memory — and, when every
  // rank runs on this machine, TCP, so that UCX's large-message protocol takes shared memory
  // rather than loopback TCP.
  std::string excluded_transports;
};

class UcxTransport : public baton::TransportV2,
                     public baton::AllReduceTransport,
                     public baton::ShardCollectiveTransport {
 public:
  // Creates the UCP context and worker; throws TransportError when UCX cannot start.
  explicit UcxTransport(const UcxOptions& options);
  ~UcxTransport() override;

  void connect(const baton::TransportContext& ctx) override;
  std::unique_ptr<baton::Work> isend(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override;
  std::unique_ptr<baton::Work> irecv(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override;
  void abort(const std::string& reason) override;
  baton::Viability supports_device(const c10::Device& device) const override;

  // AllReduceTransport (ucx_all_reduce.cc): a ring (baton/ring_all_reduce.h) over tagged
  // messages of the group's own tag space, on the group's thread.
  int join_group(const std::vector<int>& ranks) override;
  std::unique_ptr<baton::Work> iallreduce(int group,
                                          const std::vector<at::Tensor>& tensors) override;
  // ShardCollectiveTransport (ucx_all_reduce.cc): the ring's two halves, on the same thread.
  std::unique_ptr<baton::Work> ireduce_scatter(int group, const at::Tensor& input,
                                               const at::Tensor& output) override;
  std::unique_ptr<baton::Work> iall_gather(int group, const at::Tensor& input,
                                           const at::Tensor& output) override;

 private:
  struct Group {
    std::vector<int> ranks;
    std::uint64_t id = 0;  // agreed through the store: the tag of the group's messages
    std::unique_ptr<baton::CollectiveQueue> queue;
  };
  void stop_groups(const std::string& reason);
  // The ring's links over the group's tag space, and the members' view of it.
  baton::RingLinks ring_links(std::uint64_t group_id);
  std::unique_ptr<baton::Work> post_shard_collective(baton::ShardCollective kind, int handle,
                                                     const at::Tensor& whole,
                                                     const at::Tensor& shard);

  struct Peer {
    UcxTransport* owner = nullptr;  // the endpoint's error handler argument is a Peer*
    int rank = -1;
    ucp_ep_h ep = nullptr;
    std::string failure;  // why the connection is gone; empty while it works
  };

  // A request UCX holds. Its operation (and so its tensor) lives at least until UCX
  // reports the request complete.
  struct InFlight {
    UcxTransport* owner = nullptr;
    std::shared_ptr<Operation> operation;
    void* request = nullptr;
  };

  static void on_send_complete(void* request, ucs_status_t status, void* user_data);
  static void on_recv_complete(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                               void* user_data);
  static void on_peer_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void on_control_message(void* request, ucs_status_t status,
                                 const ucp_tag_recv_info_t* info, void* user_data);
  void post_control_receive_locked();
  void send_notices_locked(const std::string& text);
  void mark_peer_failed_locked(int peer, const std::string& why);

  // `collective`: a message of group `tag`'s all-reduces (collective_wire_tag).
  std::unique_ptr<baton::Work> post(const at::Tensor& tensor, int peer, std::uint64_t tag,
                                    baton::P2PDirection direction, bool collective = false);
  // post()'s operation, once its arguments (connected, peer, tensor, memory, tag) are checked.
  std::shared_ptr<Operation> checked_operation(const at::Tensor& tensor, int peer,
                                               std::uint64_t tag, baton::P2PDirection direction,
                                               bool collective);
  void check_memory(const at::Tensor& tensor, const Operation& operation) const;
  void throw_if_unusable_locked(const Operation& operation, int peer);
  void complete_locked(InFlight* entry, ucs_status_t status, std::size_t length);
  void finish(Operation& operation, ucs_status_t status, std::size_t length) const;
  void handle_peer_failures_locked();
  void fail_in_flight_locked(const std::string& suffix, bool cancel_receives);
  void close_endpoints_locked();
  void wait_for_requests(const std::vector<void*>& requests, std::chrono::milliseconds timeout);
  ucs_status_t create_endpoint(const std::vector<std::uint8_t>& address, Peer* link,
                               bool detect_failure);
  // connect(): every peer's endpoint, wired up within `timeout`.
  void connect_peers(const baton::TransportContext& ctx, std::chrono::milliseconds timeout);
  void publish_this_rank(const baton::TransportContext& ctx);  // its process and address
  void connect_to(const baton::TransportContext& ctx, int peer, std::chrono::milliseconds timeout);
  // Flushes every endpoint, which completes its wire-up: an unreachable peer fails here.
  void complete_wire_up(const baton::TransportContext& ctx,
                        std::chrono::steady_clock::time_point deadline,
                        std::chrono::milliseconds timeout);

  const UcxOptions options_;
  std::unique_ptr<Worker> worker_;
  std::shared_ptr<ProgressEngine> engine_;
  // What a Work's timed-out wait aborts (detached first thing in the destructor).
  const std::shared_ptr<baton::TransportAbortHandle> abort_handle_ =
      std::make_shared<baton::TransportAbortHandle>(this);
  std::chrono::milliseconds teardown_timeout_{60000};
  // Peers on this machine whose process is watched (connect_peers); stopped first on teardown.
  std::unique_ptr<PeerProcessWatch> process_watch_;

  // Guarded by the engine's mutex (caller_lock()), like every UCX call.
  int rank_ = -1;
  int world_size_ = 0;
  bool connected_ = false;
  bool aborted_ = false;
  bool closing_ = false;
  std::string abort_reason_;
  std::string notice_;  // what abort() or shutdown sends each peer (send_notices_locked)
  std::vector<void*> notice_requests_;
  std::vector<std::unique_ptr<Peer>> peers_;  // by rank; null for this rank
  std::vector<int> failed_peers_;             // reported by UCX, not handled yet
  std::unordered_map<InFlight*, std::unique_ptr<InFlight>> in_flight_;
  std::vector<void*> close_requests_;
  std::array<char, 1024> control_buffer_{};  // an abort notice's reason
  void* control_request_ = nullptr;          // the receive posted for notices
  bool control_repost_ = false;              // a notice arrived: post the next receive
  std::atomic<std::size_t> outstanding_{0};  // in_flight_.size(), read by the engine

  // Groups (join_group); their registry's lock is never taken under the engine's mutex.
  std::shared_ptr<baton::Store> store_;
  std::chrono::milliseconds timeout_{60000};
  baton::JoinedGroups<Group> groups_;
};

}  // namespace baton_ucx

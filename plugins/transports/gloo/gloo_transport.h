// baton's Transport over gloo's TCP transport: a full mesh of connections, point-to-point
// transfers with unbound buffers (one per operation in flight, reused by later operations
// on the same memory; see OperationRegistry), and each message in a gloo slot named by its
// tag, sequence and size, so that sizes never need a message of their own (see wire.h).
//
// Threads: callers post and wait (a caller's wait sits in gloo's own wait, see operation.h);
// one reader thread per peer handles that peer's control messages; a timer bounds waits;
// a small pool waits for operations that callers only test() or dropped; each joined group
// has a gloo context of its own, whose all-reduces run on the group's thread (gloo's
// allreduce blocks; gloo_all_reduce.cc).
#pragma once

#include <gloo/rendezvous/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "baton/all_reduce.h"
#include "baton/collective_queue.h"
#include "baton/joined_groups.h"
#include "baton/shard_collectives.h"
#include "baton/transfer_outcome.h"
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

class GlooTransport : public baton::TransportV2,
                      public baton::AllReduceTransport,
                      public baton::ShardCollectiveTransport {
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
  baton::Viability supports_device(const c10::Device& device) const override;

  // AllReduceTransport (gloo_all_reduce.cc): gloo's own allreduce on a context per group.
  int join_group(const std::vector<int>& ranks) override;
  std::unique_ptr<baton::Work> iallreduce(int group,
                                          const std::vector<at::Tensor>& tensors) override;
  // ShardCollectiveTransport (gloo_shard_collectives.cc): gloo's reduce-scatter (halving and
  // doubling) and allgatherv on the group's context, on the group's thread.
  std::unique_ptr<baton::Work> ireduce_scatter(int group, const at::Tensor& input,
                                               const at::Tensor& output) override;
  std::unique_ptr<baton::Work> iall_gather(int group, const at::Tensor& input,
                                           const at::Tensor& output) override;

 private:
  // A joined group: its gloo context (null for a group of one) and the thread its
  // all-reduces run on.
  struct Group {
    std::vector<int> ranks;
    std::shared_ptr<gloo::rendezvous::Context> context;
    std::unique_ptr<baton::CollectiveQueue> queue;
  };
  // Fails the groups' all-reduces (abort, shutdown); their connections stay open (see
  // gloo_all_reduce.cc).
  void stop_groups(const std::string& reason);
  // A reduce-scatter's or all-gather's work on the group's context: (context, timeout,
  // members).
  using ShardJob =
      std::function<void(const std::shared_ptr<gloo::Context>&, std::chrono::milliseconds, int)>;
  std::unique_ptr<baton::Work> post_shard_collective(baton::ShardCollective kind, int group,
                                                     const at::Tensor& whole,
                                                     const at::Tensor& shard, ShardJob run);

  // Control receives kept posted per peer: that many control messages can be under way to
  // this rank before a sender has to wait for the reader to take one.
  static constexpr std::size_t kControlReceives = 8;
  static constexpr std::uint64_t kNoChannel = ~std::uint64_t{0};

  // One tag's messages in one direction with one peer.
  struct TagState {
    std::uint64_t channel = kNoChannel;  // sends: chosen here; receives: told by the peer
    std::uint64_t next_sequence = 0;
    // Operations that may still be in gloo, oldest first (see kSequenceWindow).
    std::deque<std::weak_ptr<Operation>> in_flight;
  };

  // What the peer said about one of its operations before this rank posted the matching
  // one: (direction of this rank's operation, tag, sequence) -> the peer's bytes.
  using ClaimKey = std::tuple<baton::P2PDirection, std::uint64_t, std::uint64_t>;

  struct PeerLink {
    std::array<ControlMessage, kControlReceives> incoming{};
    std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> control_receives;
    std::thread reader;
    std::string failure;  // why the connection is gone; empty while it works

    std::unordered_map<std::uint64_t, TagState> sends;     // by tag
    std::unordered_map<std::uint64_t, TagState> receives;  // by tag
    std::uint64_t channels_used = 0;                       // by this rank's sends
    // Receives posted before the peer said which channel their tag uses, by tag.
    std::unordered_map<std::uint64_t, std::vector<std::shared_ptr<Operation>>> awaiting_channel;
    std::map<ClaimKey, std::uint64_t> claims;

    std::mutex control_send_mutex;  // one control message at a time goes to this peer
    ControlMessage outgoing;
    std::unique_ptr<gloo::transport::UnboundBuffer> control_send;
  };

  // Checks the arguments; throws TransportError naming the operation.
  baton::P2PDescription describe(const at::Tensor& tensor, int peer, std::uint64_t tag,
                                 baton::P2PDirection direction) const;
  void throw_if_unusable_locked(const baton::P2PDescription& what) const;
  // The next operation of its (peer, tag, direction), registered as in flight; throws when
  // that tag already has kSequenceWindow operations in flight.
  std::shared_ptr<Operation> new_operation_locked(const baton::P2PDescription& what,
                                                  const at::Tensor& tensor, TagState& state);
  // The peer's claim about the operation, if it made one (and forgets it); 0 bytes and false
  // otherwise.
  bool take_claim_locked(PeerLink& link, const Operation& operation, std::uint64_t* bytes);
  // Posts an operation's payload to gloo on `channel`. Not under mutex_: gloo's post waits
  // for the connection's lock, which gloo's I/O thread holds while it moves a payload.
  void post(const std::shared_ptr<Operation>& operation, std::uint64_t channel);
  void send_control(int peer, const ControlMessage& message);

  // Size checks (gloo_size_check.cc).
  void probe(const std::shared_ptr<Operation>& operation);
  void on_probe(int peer, const ControlMessage& message);
  void on_size_mismatch(int peer, const ControlMessage& message);
  // Fails `operation` naming both sizes (once), tells the peer when `tell_peer`, and aborts
  // the transport: no recovery (see docs/writing-a-transport.md).
  void report_mismatch(const std::shared_ptr<Operation>& operation, std::uint64_t sent_bytes,
                       std::uint64_t received_bytes, bool tell_peer);
  std::shared_ptr<Operation> find_operation(int peer, baton::P2PDirection direction,
                                            std::uint64_t tag, std::uint64_t sequence);

  // Control messages (gloo_control.cc).
  void read_control_messages(int peer);
  void on_channel(int peer, const ControlMessage& message);
  void on_peer_failure(int peer, const std::string& reason);
  void fail_everything(const std::string& suffix);

  const GlooOptions options_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::shared_ptr<OperationRegistry> registry_ = std::make_shared<OperationRegistry>();
  // What a Work's timed-out wait aborts (detached first thing in the destructor).
  const std::shared_ptr<baton::TransportAbortHandle> abort_handle_ =
      std::make_shared<baton::TransportAbortHandle>(this);
  int rank_ = -1;
  int world_size_ = 0;
  std::chrono::milliseconds timeout_{60000};

  std::mutex mutex_;  // guards everything below and the PeerLinks' matching state
  bool aborted_ = false;
  std::string abort_reason_;
  bool closing_ = false;
  std::vector<std::unique_ptr<PeerLink>> links_;  // by peer rank; null for this rank
  std::shared_ptr<baton::Store> store_;           // for the groups' rendezvous
  baton::JoinedGroups<Group> groups_;
};

}  // namespace baton_gloo

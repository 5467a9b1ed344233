#include "gloo_transport.h"

#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>

#include <cstdio>

#include "baton/transport_support.h"
#include "gloo_errors.h"
#include "store_adapter.h"

namespace baton_gloo {

namespace {

// Deadline for gloo's own waits (see operation.cc): never reached.
constexpr std::chrono::milliseconds kNoDeadline = std::chrono::hours(24 * 30);

// How long a broken connection's operations get to report that they completed before it
// broke (see on_peer_failure).
constexpr std::chrono::milliseconds kPeerFailureGrace(500);

std::string device_location(const GlooOptions& options) {
  return options.interface.empty() ? "address '" + options.address + "'"
                                   : "interface '" + options.interface + "'";
}

std::string hex(std::uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

constexpr std::size_t GlooTransport::kControlReceives;

GlooTransport::GlooTransport(const GlooOptions& options) : options_(options) {
  gloo::transport::tcp::attr attr;
  if (options.interface.empty()) {
    attr.hostname = options.address;
  } else {
    attr.iface = options.interface;
  }
  try {
    device_ = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& error) {
    throw baton::TransportError("gloo: cannot create a TCP device on " + device_location(options) +
                                ": " + error.what());
  }
}

GlooTransport::~GlooTransport() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  fail_everything(": the transport was shut down");
  for (auto& link : links_) {
    if (link == nullptr) continue;
    for (auto& buffer : link->control_receives) buffer->abortWaitRecv();
    // A reader may be telling its peer about a size mismatch.
    link->control_send->abortWaitSend();
    if (link->reader.joinable()) link->reader.join();
  }
  registry_->waiters.shutdown();
  // Buffers go before the context and the device they were created from. A Work that
  // outlives the transport keeps its own operation; its wait reports the shutdown.
  registry_->clear();
  links_.clear();
  context_.reset();
  device_.reset();
}

void GlooTransport::connect(const baton::TransportContext& ctx) {
  const std::string who = baton::rank_prefix(ctx.rank);
  if (context_ != nullptr) throw baton::TransportError(who + "gloo: connect() was already called");
  if (ctx.world_size < 1 || ctx.rank < 0 || ctx.rank >= ctx.world_size) {
    throw baton::TransportError(who + "gloo: rank outside a world of " +
                                std::to_string(ctx.world_size) + " ranks");
  }
  if (ctx.store == nullptr) throw baton::TransportError(who + "gloo: no rendezvous store");
  const std::chrono::milliseconds timeout =
      options_.connect_timeout.count() > 0 ? options_.connect_timeout : ctx.timeout;

  auto context = std::make_shared<gloo::rendezvous::Context>(ctx.rank, ctx.world_size);
  context->setTimeout(timeout);
  StoreAdapter store(ctx.store, timeout);
  const int peers = ctx.world_size - 1;
  const std::string what = "connecting to the other " + std::to_string(peers) +
                           (peers == 1 ? " rank" : " ranks") + " (gloo, " +
                           device_location(options_) + ") failed: ";
  try {
    context->connectFullMesh(store, device_);
  } catch (const baton::Error& error) {
    throw baton::TransportError(who + what + error.what());
  } catch (const std::exception& error) {
    throw baton::TransportError(who + what + explain_gloo_error(error, -1));
  }

  std::lock_guard<std::mutex> lock(mutex_);
  rank_ = ctx.rank;
  world_size_ = ctx.world_size;
  timeout_ = ctx.timeout;
  context_ = std::move(context);
  links_.resize(static_cast<std::size_t>(world_size_));
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer == rank_) continue;
    auto link = std::make_unique<PeerLink>();
    for (std::size_t i = 0; i < kControlReceives; ++i) {
      link->control_receives.push_back(
          context_->createUnboundBuffer(&link->incoming[i], sizeof(ControlMessage)));
      // gloo fills receives posted on one slot in the order they were posted.
      link->control_receives.back()->recv(peer, kControlSlot);
    }
    link->control_send = context_->createUnboundBuffer(&link->outgoing, sizeof(ControlMessage));
    links_[peer] = std::move(link);
  }
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer != rank_)
      links_[peer]->reader = std::thread([this, peer] { read_control_messages(peer); });
  }
}

baton::P2PDescription GlooTransport::describe(const at::Tensor& tensor, int peer, std::uint64_t tag,
                                              baton::P2PDirection direction) const {
  if (context_ == nullptr) {
    throw baton::TransportError(
        "gloo: " + std::string(direction == baton::P2PDirection::kSend ? "isend" : "irecv") +
        "() before connect()");
  }
  baton::check_p2p_arguments(tensor, rank_, world_size_, peer, direction);
  baton::P2PDescription what{direction, peer, tag, baton::tensor_bytes(tensor)};
  if (tag > kMaxUserTag) {
    throw baton::TransportError(baton::rank_prefix(rank_) + what.str() + ": tag " + hex(tag) +
                                " is too large; the gloo transport carries tags up to " +
                                hex(kMaxUserTag));
  }
  return what;
}

std::shared_ptr<Operation> GlooTransport::new_operation_locked(const baton::P2PDescription& what,
                                                               const at::Tensor& tensor,
                                                               std::uint64_t sequence) {
  auto operation =
      std::make_shared<Operation>(rank_, what, tensor, payload_slot(what.tag, sequence));
  operation->payload = context_->createUnboundBuffer(operation->data(), what.bytes);
  registry_->add(operation);
  return operation;
}

void GlooTransport::throw_if_unusable_locked(const baton::P2PDescription& what) const {
  const std::string name = baton::rank_prefix(rank_) + what.str();
  if (aborted_) throw baton::TransportError(name + ": the transport was aborted: " + abort_reason_);
  if (closing_) throw baton::TransportError(name + ": the transport is shutting down");
  const std::string& failure = links_[what.peer]->failure;
  if (!failure.empty()) throw baton::TransportError(name + " failed: " + failure);
}

std::unique_ptr<baton::Work> GlooTransport::isend(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  const baton::P2PDescription what = describe(tensor, peer, tag, baton::P2PDirection::kSend);
  std::shared_ptr<Operation> operation;
  std::uint64_t receive_bytes = 0;
  bool receive_posted = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    throw_if_unusable_locked(what);
    PeerLink& link = *links_[peer];
    operation = new_operation_locked(what, tensor, link.next_send[tag]++);
    const std::uint64_t slot = operation->slot();
    auto posted = link.posted_by_peer.find(slot);
    if (posted == link.posted_by_peer.end()) {
      operation->set_phase(Operation::Phase::kAwaitingReceiver);
      link.awaiting_receiver.emplace(slot, operation);
    } else {
      receive_posted = true;
      receive_bytes = posted->second;
      link.posted_by_peer.erase(posted);
    }
  }
  if (receive_posted) start_send(operation, receive_bytes);
  return std::make_unique<GlooWork>(operation, registry_);
}

void GlooTransport::start_send(const std::shared_ptr<Operation>& operation,
                               std::uint64_t receive_bytes) {
  // Outside mutex_: gloo's post waits for the connection's lock, which gloo's I/O thread
  // holds while it moves a payload (milliseconds for large ones). Every message has a slot
  // of its own, so posts need no ordering among themselves.
  if (receive_bytes != operation->what().bytes) {
    // Like a transport that cannot tell, the sender completes; the receiver fails. A caller
    // already waiting in gloo for the payload that never leaves is woken.
    operation->succeed();
    operation->interrupt();
    report_size_mismatch(*operation);
    return;
  }
  try {
    operation->payload->send(operation->what().peer, operation->slot());
  } catch (const std::exception& error) {
    operation->fail(operation->name() +
                    " failed: " + explain_gloo_error(error, operation->what().peer));
    operation->interrupt();
  }
}

std::unique_ptr<baton::Work> GlooTransport::irecv(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  const baton::P2PDescription what = describe(tensor, peer, tag, baton::P2PDirection::kRecv);
  std::shared_ptr<Operation> operation;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    throw_if_unusable_locked(what);
    PeerLink& link = *links_[peer];
    operation = new_operation_locked(what, tensor, link.next_recv[tag]++);
  }
  try {
    // Posted first (outside mutex_, see start_send), so gloo's "receive ready" reaches the
    // sender before our control message does and the payload can leave as soon as the send
    // is matched.
    operation->payload->recv(peer, operation->slot());
  } catch (const std::exception& error) {
    operation->fail(operation->name() + " failed: " + explain_gloo_error(error, peer));
    throw baton::TransportError(operation->name() + " failed: " + explain_gloo_error(error, peer));
  }
  ControlMessage posted;
  posted.kind = ControlKind::kReceivePosted;
  posted.slot = operation->slot();
  posted.bytes = operation->what().bytes;
  try {
    send_control(peer, posted);
  } catch (const baton::TransportError& error) {
    operation->fail(operation->name() + " failed: " + error.what());
    operation->interrupt();
    throw baton::TransportError(operation->name() + " failed: " + error.what());
  }
  return std::make_unique<GlooWork>(operation, registry_);
}

void GlooTransport::send_control(int peer, const ControlMessage& message) {
  PeerLink& link = *links_[peer];
  std::lock_guard<std::mutex> lock(link.control_send_mutex);
  link.outgoing = message;
  bool sent = false;
  try {
    link.control_send->send(peer, kControlSlot);
    // Usually written at once (the peer keeps receives posted); bounded by the run's
    // timeout when the peer stops taking control messages.
    gloo::transport::UnboundBuffer* buffer = link.control_send.get();
    const DeadlineTimer::Id deadline = registry_->timer.schedule(
        DeadlineTimer::Clock::now() + timeout_, [buffer] { buffer->abortWaitSend(); });
    sent = link.control_send->waitSend(nullptr, kNoDeadline);
    registry_->timer.cancel(deadline);
  } catch (const std::exception& error) {
    throw baton::TransportError(explain_gloo_error(error, peer));
  }
  if (!sent) {
    std::lock_guard<std::mutex> state(mutex_);
    if (aborted_) throw baton::TransportError("the transport was aborted: " + abort_reason_);
    if (closing_) throw baton::TransportError("the transport is shutting down");
    throw baton::TransportError("rank " + std::to_string(peer) + " took no control message for " +
                                baton::format_seconds(timeout_) + " (is it stopped?)");
  }
}

void GlooTransport::report_size_mismatch(const Operation& send) {
  ControlMessage mismatch;
  mismatch.kind = ControlKind::kSizeMismatch;
  mismatch.slot = send.slot();
  mismatch.bytes = send.what().bytes;
  try {
    send_control(send.what().peer, mismatch);
  } catch (const baton::TransportError&) {
    // The connection is gone or the transport stops: the receive fails for that reason.
  }
}

void GlooTransport::read_control_messages(int peer) {
  PeerLink& link = *links_[peer];
  for (std::size_t next = 0;; next = (next + 1) % kControlReceives) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (aborted_ || closing_) return;
    }
    try {
      if (!link.control_receives[next]->waitRecv(nullptr, kNoDeadline)) return;  // shutdown
    } catch (const std::exception& error) {
      on_peer_failure(peer, explain_gloo_error(error, peer));
      return;
    }
    const ControlMessage message = link.incoming[next];
    if (message.magic != kControlMagic) {
      on_peer_failure(peer, "rank " + std::to_string(peer) +
                                " does not speak this version of baton's gloo protocol (magic " +
                                hex(message.magic) + ")");
      return;
    }
    // Handled before the receive is posted again: posting waits for gloo's connection lock,
    // which gloo's I/O thread holds while it reads a payload (milliseconds for large ones).
    if (message.kind == ControlKind::kReceivePosted) {
      on_receive_posted(peer, message);
    } else if (message.kind == ControlKind::kSizeMismatch) {
      on_size_mismatch(peer, message);
    }
    try {
      link.control_receives[next]->recv(peer, kControlSlot);
    } catch (const std::exception& error) {
      on_peer_failure(peer, explain_gloo_error(error, peer));
      return;
    }
  }
}

void GlooTransport::on_receive_posted(int peer, const ControlMessage& message) {
  std::shared_ptr<Operation> send;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    PeerLink& link = *links_[peer];
    auto waiting = link.awaiting_receiver.find(message.slot);
    if (waiting == link.awaiting_receiver.end()) {
      link.posted_by_peer.emplace(message.slot, message.bytes);
      return;
    }
    send = std::move(waiting->second);
    link.awaiting_receiver.erase(waiting);
    send->set_phase(Operation::Phase::kTransferring);
  }
  start_send(send, message.bytes);
}

void GlooTransport::on_size_mismatch(int peer, const ControlMessage& message) {
  for (const std::shared_ptr<Operation>& operation : registry_->all()) {
    const baton::P2PDescription& what = operation->what();
    if (what.direction != baton::P2PDirection::kRecv || what.peer != peer ||
        operation->slot() != message.slot) {
      continue;
    }
    // The payload was not sent, and nothing is ever sent to this slot again: the posted
    // gloo receive stays unmatched, and the next message with this tag has its own slot.
    operation->fail(operation->name() + ": size mismatch: rank " + std::to_string(peer) + " sent " +
                    std::to_string(message.bytes) + " bytes, the receive tensor holds " +
                    std::to_string(what.bytes) + " bytes");
    operation->interrupt();
  }
}

void GlooTransport::on_peer_failure(int peer, const std::string& reason) {
  std::vector<std::shared_ptr<Operation>> orphans;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;  // our own shutdown closed the connection
    PeerLink& link = *links_[peer];
    if (!link.failure.empty()) return;
    link.failure = reason;
    for (auto& entry : link.awaiting_receiver) orphans.push_back(entry.second);
    link.awaiting_receiver.clear();
  }
  for (auto& operation : orphans) operation->fail(operation->name() + " failed: " + reason);
  // gloo signals the broken connection to operations still queued, but not to the one whose
  // bytes were under way: that one would wait forever. Operations that completed before the
  // connection broke report it as soon as someone waits; so wait for them all, give them a
  // moment, then fail and release the rest.
  std::vector<std::shared_ptr<Operation>> affected;
  for (const std::shared_ptr<Operation>& operation : registry_->all()) {
    if (operation->what().peer != peer || operation->settled()) continue;
    std::weak_ptr<OperationRegistry> registry = registry_;
    const Operation* key = operation.get();
    operation->wait_in_background(registry_->waiters, [registry, key] {
      if (auto alive = registry.lock()) alive->remove(key);
    });
    affected.push_back(operation);
  }
  const auto deadline = std::chrono::steady_clock::now() + kPeerFailureGrace;
  for (auto& operation : affected) {
    if (operation->settled_by(deadline)) continue;
    operation->fail(operation->name() + " failed: " + reason);
    operation->interrupt();
  }
}

void GlooTransport::fail_everything(const std::string& suffix) {
  std::vector<std::shared_ptr<Operation>> waiting;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& link : links_) {
      if (link == nullptr) continue;
      for (auto& entry : link->awaiting_receiver) waiting.push_back(entry.second);
      link->awaiting_receiver.clear();
    }
  }
  for (auto& operation : waiting) operation->fail(operation->name() + suffix);
  for (const std::shared_ptr<Operation>& operation : registry_->all()) {
    operation->fail(operation->name() + suffix);
    operation->interrupt();
  }
}

void GlooTransport::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    aborted_ = true;
    abort_reason_ = reason;
  }
  fail_everything(": the transport was aborted: " + reason);
  for (auto& link : links_) {
    if (link == nullptr) continue;
    for (auto& buffer : link->control_receives) buffer->abortWaitRecv();
    link->control_send->abortWaitSend();
  }
  // Peers blocked on this rank fail now ("peer rank N closed the connection") instead of
  // at their timeouts.
  if (context_ != nullptr) context_->closeConnections();
}

}  // namespace baton_gloo

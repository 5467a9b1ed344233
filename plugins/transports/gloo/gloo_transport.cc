#include "gloo_transport.h"

#include <ATen/ops/empty.h>
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>

#include <cstdio>

#include "baton/transport_support.h"
#include "gloo_errors.h"
#include "store_adapter.h"

namespace baton_gloo {

namespace {

// Deadline for gloo's own waits. Never reached in practice: callers' timeouts are applied
// by Operation::wait(), and shutdown interrupts the gloo waits. (A gloo wait that expires
// would close every connection of the context.)
constexpr std::chrono::milliseconds kNoDeadline = std::chrono::hours(24 * 30);

// How long a broken connection's completed operations get to report success (see
// on_peer_failure).
constexpr std::chrono::milliseconds kPeerFailureGrace(500);

std::string device_location(const GlooOptions& options) {
  return options.interface.empty() ? "address '" + options.address + "'"
                                   : "interface '" + options.interface + "'";
}

}  // namespace

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
  std::vector<std::shared_ptr<Operation>> waiting;
  std::vector<std::shared_ptr<Operation>> in_flight;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    for (auto& link : links_) {
      if (link == nullptr) continue;
      for (auto& entry : link->waiting)
        waiting.insert(waiting.end(), entry.second.begin(), entry.second.end());
      link->waiting.clear();
    }
    for (auto& entry : in_flight_) in_flight.push_back(entry.second);
  }
  for (auto& operation : waiting)
    operation->fail(operation->name() + ": the transport was shut down");
  for (auto& operation : in_flight) {
    operation->fail(operation->name() + ": the transport was shut down");
    interrupt(*operation);
  }
  for (auto& link : links_) {
    if (link == nullptr) continue;
    link->buffer->abortWaitRecv();
    if (link->reader.joinable()) link->reader.join();
  }
  waiters_.shutdown();
  // Buffers go before the context and the device they were created from.
  in_flight_.clear();
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
  context_ = std::move(context);
  links_.resize(static_cast<std::size_t>(world_size_));
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer == rank_) continue;
    auto link = std::make_unique<PeerLink>();
    link->buffer = context_->createUnboundBuffer(&link->incoming, sizeof(Announcement));
    links_[peer] = std::move(link);
  }
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer != rank_)
      links_[peer]->reader = std::thread([this, peer] { read_announcements(peer); });
  }
}

std::shared_ptr<Operation> GlooTransport::prepare(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag,
                                                  baton::P2PDirection direction) {
  if (context_ == nullptr) {
    throw baton::TransportError(
        "gloo: " + std::string(direction == baton::P2PDirection::kSend ? "isend" : "irecv") +
        "() before connect()");
  }
  baton::check_p2p_arguments(tensor, rank_, world_size_, peer, direction);
  baton::P2PDescription what{direction, peer, tag, baton::tensor_bytes(tensor)};
  if (tag == kAnnounceSlot) {
    throw baton::TransportError(baton::rank_prefix(rank_) + what.str() + ": tag " +
                                baton::format_tag(tag) + " is reserved by the gloo transport");
  }
  auto operation = std::make_shared<Operation>(rank_, what, tensor);
  operation->payload = context_->createUnboundBuffer(operation->data(), what.bytes);
  return operation;
}

void GlooTransport::throw_if_stopped_locked(const Operation& operation) const {
  if (aborted_) {
    throw baton::TransportError(operation.name() + ": the transport was aborted: " + abort_reason_);
  }
  if (closing_) throw baton::TransportError(operation.name() + ": the transport is shutting down");
}

std::unique_ptr<baton::Work> GlooTransport::isend(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  std::shared_ptr<Operation> operation = prepare(tensor, peer, tag, baton::P2PDirection::kSend);
  operation->announcement = Announcement{kAnnounceMagic, tag, operation->what().bytes};
  operation->announce_buffer =
      context_->createUnboundBuffer(&operation->announcement, sizeof(Announcement));

  std::lock_guard<std::mutex> lock(mutex_);
  throw_if_stopped_locked(*operation);
  const std::string& failure = links_[peer]->failure;
  if (!failure.empty()) throw baton::TransportError(operation->name() + " failed: " + failure);
  try {
    // Under the lock: per peer, announcements leave in the order of the payload sends.
    operation->announce_buffer->send(peer, kAnnounceSlot);
    operation->payload->send(peer, tag);
  } catch (const std::exception& error) {
    throw baton::TransportError(operation->name() + " failed: " + explain_gloo_error(error, peer));
  }
  watch_locked(operation);
  return std::make_unique<GlooWork>(operation);
}

std::unique_ptr<baton::Work> GlooTransport::irecv(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  std::shared_ptr<Operation> operation = prepare(tensor, peer, tag, baton::P2PDirection::kRecv);

  std::lock_guard<std::mutex> lock(mutex_);
  throw_if_stopped_locked(*operation);
  PeerLink& link = *links_[peer];
  if (!link.failure.empty())
    throw baton::TransportError(operation->name() + " failed: " + link.failure);
  auto announced = link.unclaimed.find(tag);
  if (announced != link.unclaimed.end()) {
    const std::uint64_t bytes = announced->second.front();
    announced->second.pop_front();
    if (announced->second.empty()) link.unclaimed.erase(announced);
    start_recv_locked(operation, bytes);
  } else {
    operation->set_phase(Operation::Phase::kAwaitingAnnouncement);
    link.waiting[tag].push_back(operation);
  }
  return std::make_unique<GlooWork>(operation);
}

void GlooTransport::start_recv_locked(const std::shared_ptr<Operation>& operation,
                                      std::uint64_t announced) {
  const baton::P2PDescription& what = operation->what();
  if (announced != what.bytes) {
    operation->fail(operation->name() + ": size mismatch: rank " + std::to_string(what.peer) +
                    " sent " + std::to_string(announced) + " bytes, the receive tensor holds " +
                    std::to_string(what.bytes) + " bytes");
    drain_locked(what.peer, what.tag, announced);
    return;
  }
  operation->set_phase(Operation::Phase::kTransferring);
  try {
    operation->payload->recv(what.peer, what.tag);
  } catch (const std::exception& error) {
    operation->fail(operation->name() + " failed: " + explain_gloo_error(error, what.peer));
    return;
  }
  watch_locked(operation);
}

void GlooTransport::drain_locked(int peer, std::uint64_t tag, std::uint64_t bytes) {
  // The sender's payload is on its way to this slot; receive it into scratch memory so the
  // next message with this tag lands where it belongs (and the sender completes).
  at::Tensor scratch = at::empty({static_cast<std::int64_t>(bytes)}, at::kByte);
  auto drain = std::make_shared<Operation>(
      rank_, baton::P2PDescription{baton::P2PDirection::kRecv, peer, tag, bytes}, scratch);
  drain->payload = context_->createUnboundBuffer(drain->data(), bytes);
  try {
    drain->payload->recv(peer, tag);
  } catch (const std::exception&) {
    return;  // the connection is gone; nothing left to drain
  }
  watch_locked(drain);
}

void GlooTransport::watch_locked(const std::shared_ptr<Operation>& operation) {
  in_flight_[operation.get()] = operation;
  waiters_.run([this, operation] {
    const baton::P2PDescription& what = operation->what();
    try {
      const bool completed = what.direction == baton::P2PDirection::kSend
                                 ? operation->payload->waitSend(nullptr, kNoDeadline)
                                 : operation->payload->waitRecv(nullptr, kNoDeadline);
      // An interrupted wait was already failed by abort() or the destructor.
      if (completed)
        operation->succeed();
      else
        operation->fail(operation->name() + ": interrupted");
    } catch (const std::exception& error) {
      operation->fail(operation->name() + " failed: " + explain_gloo_error(error, what.peer));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_.erase(operation.get());
  });
}

void GlooTransport::interrupt(const Operation& operation) const {
  if (operation.what().direction == baton::P2PDirection::kSend) {
    operation.payload->abortWaitSend();
  } else {
    operation.payload->abortWaitRecv();
  }
}

void GlooTransport::read_announcements(int peer) {
  PeerLink& link = *links_[peer];
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (aborted_ || closing_) return;
    }
    try {
      link.buffer->recv(peer, kAnnounceSlot);
      if (!link.buffer->waitRecv(nullptr, kNoDeadline)) return;  // interrupted: shutting down
    } catch (const std::exception& error) {
      on_peer_failure(peer, explain_gloo_error(error, peer));
      return;
    }
    if (link.incoming.magic != kAnnounceMagic) {
      char magic[32];
      std::snprintf(magic, sizeof(magic), "0x%llx",
                    static_cast<unsigned long long>(link.incoming.magic));
      on_peer_failure(peer, "rank " + std::to_string(peer) +
                                " does not speak this version of baton's gloo protocol (magic " +
                                magic + ")");
      return;
    }
    on_announcement(peer, link.incoming);
  }
}

void GlooTransport::on_announcement(int peer, const Announcement& announcement) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_ || closing_) return;
  PeerLink& link = *links_[peer];
  auto waiting = link.waiting.find(announcement.tag);
  if (waiting == link.waiting.end()) {
    link.unclaimed[announcement.tag].push_back(announcement.bytes);
    return;
  }
  std::shared_ptr<Operation> operation = waiting->second.front();
  waiting->second.pop_front();
  if (waiting->second.empty()) link.waiting.erase(waiting);
  start_recv_locked(operation, announcement.bytes);
}

void GlooTransport::on_peer_failure(int peer, const std::string& reason) {
  std::vector<std::shared_ptr<Operation>> orphans;
  std::vector<std::shared_ptr<Operation>> in_flight;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;  // our own shutdown closed the connection
    PeerLink& link = *links_[peer];
    if (!link.failure.empty()) return;
    link.failure = reason;
    for (auto& entry : link.waiting)
      orphans.insert(orphans.end(), entry.second.begin(), entry.second.end());
    link.waiting.clear();
    for (auto& entry : in_flight_) {
      if (entry.second->what().peer == peer) in_flight.push_back(entry.second);
    }
  }
  for (auto& operation : orphans) operation->fail(operation->name() + " failed: " + reason);
  // gloo signals the broken connection to operations still queued, but not to the one whose
  // bytes were under way: that one would wait forever. Operations that completed before the
  // connection broke are being finished by their waiter threads; give them a moment, then
  // fail and release the rest.
  const auto deadline = std::chrono::steady_clock::now() + kPeerFailureGrace;
  for (auto& operation : in_flight) {
    if (operation->settled_by(deadline)) continue;
    operation->fail(operation->name() + " failed: " + reason);
    interrupt(*operation);
  }
}

void GlooTransport::abort(const std::string& reason) {
  std::vector<std::shared_ptr<Operation>> waiting;
  std::vector<std::shared_ptr<Operation>> in_flight;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    aborted_ = true;
    abort_reason_ = reason;
    for (auto& link : links_) {
      if (link == nullptr) continue;
      for (auto& entry : link->waiting)
        waiting.insert(waiting.end(), entry.second.begin(), entry.second.end());
      link->waiting.clear();
    }
    for (auto& entry : in_flight_) in_flight.push_back(entry.second);
  }
  const std::string suffix = ": the transport was aborted: " + reason;
  for (auto& operation : waiting) operation->fail(operation->name() + suffix);
  for (auto& operation : in_flight) {
    operation->fail(operation->name() + suffix);
    interrupt(*operation);
  }
  for (auto& link : links_) {
    if (link != nullptr) link->buffer->abortWaitRecv();
  }
  // Peers blocked on this rank fail now ("peer rank N closed the connection") instead of
  // at their timeouts.
  if (context_ != nullptr) context_->closeConnections();
}

}  // namespace baton_gloo

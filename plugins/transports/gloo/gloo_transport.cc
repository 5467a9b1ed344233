#include "gloo_transport.h"

#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>
#include <ifaddrs.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>

#include "baton/log.h"
#include "baton/transport_support.h"
#include "gloo_errors.h"
#include "store_adapter.h"

namespace baton_gloo {

namespace {

std::string device_location(const GlooOptions& options) {
  return options.interface.empty() ? "address '" + options.address + "'"
                                   : "interface '" + options.interface + "'";
}

// Whether `name` is an interface with an IPv4 or IPv6 address, which is what gloo looks for.
// Asked here first because gloo, when it finds none, throws without freeing the interface
// list it read (LeakSanitizer found it).
bool interface_has_address(const std::string& name) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return true;  // let gloo say what is wrong
  bool found = false;
  for (const ifaddrs* entry = list; entry != nullptr && !found; entry = entry->ifa_next) {
    found = entry->ifa_addr != nullptr && name == entry->ifa_name &&
            (entry->ifa_addr->sa_family == AF_INET || entry->ifa_addr->sa_family == AF_INET6);
  }
  ::freeifaddrs(list);
  return found;
}

}  // namespace

constexpr std::size_t GlooTransport::kControlReceives;
constexpr std::uint64_t GlooTransport::kNoChannel;

GlooTransport::GlooTransport(const GlooOptions& options) : options_(options) {
  gloo::transport::tcp::attr attr;
  if (options.interface.empty()) {
    attr.hostname = options.address;
  } else {
    attr.iface = options.interface;
    if (!interface_has_address(options.interface)) {
      throw baton::TransportError("gloo: cannot create a TCP device on " +
                                  device_location(options) +
                                  ": no interface of that name has an IP address (`ip -brief "
                                  "address` lists them)");
    }
  }
  try {
    device_ = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& error) {
    throw baton::TransportError("gloo: cannot create a TCP device on " + device_location(options) +
                                ": " + error.what());
  }
}

GlooTransport::~GlooTransport() {
  abort_handle_->detach();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  fail_everything(": the transport was shut down");
  stop_groups("the transport was shut down");
  for (auto& link : links_) {
    if (link == nullptr) continue;
    for (auto& buffer : link->control_receives) buffer->abortWaitRecv();
    // A reader or a waiter may be sending the peer a control message.
    link->control_send->abortWaitSend();
    if (link->reader.joinable()) link->reader.join();
  }
  registry_->set_prober(nullptr);  // waits for a probe under way
  registry_->waiters.shutdown();
  // The pairs close first: gloo's loop thread fails a pair's posted buffers when its peer
  // hangs up, so a buffer destroyed while the pair is open races with it (TSan found this).
  // Closing takes each pair's lock, after which the loop no longer touches its buffers.
  if (context_) context_->closeConnections();
  // Joins the groups' threads. One inside gloo's allreduce returns once a peer closes its
  // side (a peer in the runtime does when this rank's connections close, just above), at the
  // latest at gloo's timeout; then each group's connections close.
  groups_.clear();
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
  // gloo waits five times a pair's timeout for the initial connect (tcp/pair.h, waitUntil):
  // with timeout_s 120 a peer that published its address and then hung held this rank for
  // ten minutes. The pairs are made with a fifth, so the whole connect is bounded by the
  // timeout; every later wait passes its own deadline (operation.cc), not the pair's.
  context->setTimeout(std::max(std::chrono::milliseconds(1), timeout / 5));
  StoreAdapter store(ctx.store, timeout);
  const int peers = ctx.world_size - 1;
  const std::string what = "connecting to the other " + std::to_string(peers) +
                           (peers == 1 ? " rank" : " ranks") + " (gloo, " +
                           device_location(options_) + ") failed: ";
  BATON_LOG_DEBUG("gloo", "connecting to " << peers << (peers == 1 ? " peer" : " peers") << " on "
                                           << device_location(options_) << " (timeout "
                                           << baton::format_seconds(timeout) << ")");
  try {
    context->connectFullMesh(store, device_);
    context->setTimeout(timeout);
  } catch (const baton::Error& error) {
    throw baton::TransportError(who + what + error.what());
  } catch (const std::exception& error) {
    throw baton::TransportError(who + what + explain_gloo_error(error, -1));
  }

  {
    std::lock_guard<std::mutex> lock(mutex_);
    rank_ = ctx.rank;
    world_size_ = ctx.world_size;
    timeout_ = ctx.timeout;
    store_ = ctx.store;
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
  }
  // Outside mutex_: a probe runs under the registry's lock and takes mutex_ (send_control),
  // so taking the registry's lock while holding mutex_ would invert that order (TSan found
  // it in the conformance suite).
  registry_->set_prober([this](const std::shared_ptr<Operation>& operation) { probe(operation); });
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
  if (what.bytes > kMaxMessageBytes) {
    throw baton::TransportError(
        baton::rank_prefix(rank_) + what.str() + ": the gloo transport carries messages of up to " +
        std::to_string(kMaxMessageBytes) + " bytes (64 GiB); split the tensor");
  }
  return what;
}

void GlooTransport::throw_if_unusable_locked(const baton::P2PDescription& what) const {
  const std::string& failure = links_[what.peer]->failure;
  if (!aborted_ && !closing_ && failure.empty()) return;  // every operation passes here: no text
  const std::string name = baton::rank_prefix(rank_) + what.str();
  if (aborted_) throw baton::TransportError(name + ": the transport was aborted: " + abort_reason_);
  if (closing_) throw baton::TransportError(name + ": the transport is shutting down");
  throw baton::TransportError(name + " failed: " + failure);
}

std::shared_ptr<Operation> GlooTransport::new_operation_locked(const baton::P2PDescription& what,
                                                               const at::Tensor& tensor,
                                                               TagState& state) {
  std::deque<std::weak_ptr<Operation>>& in_flight = state.in_flight;
  while (!in_flight.empty()) {
    std::shared_ptr<Operation> oldest = in_flight.front().lock();
    if (oldest != nullptr && !oldest->settled()) break;
    in_flight.pop_front();
  }
  if (in_flight.size() >= kSequenceWindow) {
    throw baton::TransportError(baton::rank_prefix(rank_) + what.str() + ": " +
                                std::to_string(kSequenceWindow) +
                                " operations with this tag and peer are in flight, the most the "
                                "gloo transport allows; wait for the oldest first");
  }
  auto operation = std::make_shared<Operation>(rank_, what, tensor, state.next_sequence++,
                                               Operation::Clock::now() + kProbeAfter);
  operation->payload = registry_->reuse_buffer(operation->data(), what.bytes);
  if (operation->payload == nullptr) {
    operation->payload = context_->createUnboundBuffer(operation->data(), what.bytes);
  }
  registry_->add(operation);
  in_flight.push_back(operation);
  return operation;
}

bool GlooTransport::take_claim_locked(PeerLink& link, const Operation& operation,
                                      std::uint64_t* bytes) {
  if (link.claims.empty()) return false;  // the usual case
  const baton::P2PDescription& what = operation.what();
  auto claim = link.claims.find(ClaimKey{what.direction, what.tag, operation.sequence()});
  if (claim == link.claims.end()) return false;
  *bytes = claim->second;
  link.claims.erase(claim);
  return true;
}

void GlooTransport::post(const std::shared_ptr<Operation>& operation, std::uint64_t channel) {
  const baton::P2PDescription& what = operation->what();
  const std::uint64_t slot = payload_slot(channel, operation->sequence(), what.bytes);
  try {
    if (what.direction == baton::P2PDirection::kSend) {
      operation->payload->send(what.peer, slot);
    } else {
      operation->payload->recv(what.peer, slot);
    }
  } catch (const std::exception& error) {
    const std::string message =
        operation->name() + " failed: " + explain_gloo_error(error, what.peer);
    operation->fail(message);
    operation->interrupt();
    throw baton::TransportError(message);
  }
}

baton::Viability GlooTransport::supports_device(const c10::Device& device) const {
  if (device.is_cpu()) return baton::Viability::yes();
  return baton::Viability::no("gloo moves CPU tensors only");
}

std::unique_ptr<baton::Work> GlooTransport::isend(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  const baton::P2PDescription what = describe(tensor, peer, tag, baton::P2PDirection::kSend);
  std::shared_ptr<Operation> operation;
  std::uint64_t channel = kNoChannel;
  bool first_of_tag = false;
  std::uint64_t claimed_bytes = 0;
  bool claimed = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    throw_if_unusable_locked(what);
    PeerLink& link = *links_[peer];
    TagState& state = link.sends[tag];
    if (state.channel == kNoChannel) {
      if (link.channels_used == kMaxChannels) {
        throw baton::TransportError(baton::rank_prefix(rank_) + what.str() +
                                    ": this rank already sent " + std::to_string(kMaxChannels) +
                                    " different tags to rank " + std::to_string(peer) +
                                    ", the most the gloo transport tells apart; reuse tags");
      }
      state.channel = link.channels_used++;
      first_of_tag = true;
    }
    channel = state.channel;
    operation = new_operation_locked(what, tensor, state);
    claimed = take_claim_locked(link, *operation, &claimed_bytes);
  }
  if (first_of_tag) {
    ControlMessage announce;
    announce.kind = ControlKind::kChannel;
    announce.tag = tag;
    announce.value = channel;
    try {
      send_control(peer, announce);
    } catch (const baton::TransportError& error) {
      const std::string message = operation->name() + " failed: " + error.what();
      operation->fail(message);
      throw baton::TransportError(message);
    }
  }
  post(operation, channel);
  if (claimed && claimed_bytes != what.bytes) {
    report_mismatch(operation, what.bytes, claimed_bytes, /*tell_peer=*/true);
  }
  return std::make_unique<GlooWork>(operation, registry_, abort_handle_);
}

std::unique_ptr<baton::Work> GlooTransport::irecv(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  const baton::P2PDescription what = describe(tensor, peer, tag, baton::P2PDirection::kRecv);
  std::shared_ptr<Operation> operation;
  std::uint64_t channel = kNoChannel;
  std::uint64_t claimed_bytes = 0;
  bool claimed = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    throw_if_unusable_locked(what);
    PeerLink& link = *links_[peer];
    TagState& state = link.receives[tag];
    operation = new_operation_locked(what, tensor, state);
    channel = state.channel;
    if (channel == kNoChannel) {
      // Posted by the reader once the sender says which channel the tag uses.
      operation->set_phase(Operation::Phase::kAwaitingChannel);
      link.awaiting_channel[tag].push_back(operation);
    }
    claimed = take_claim_locked(link, *operation, &claimed_bytes);
  }
  if (channel != kNoChannel) post(operation, channel);
  if (claimed && claimed_bytes != what.bytes) {
    report_mismatch(operation, claimed_bytes, what.bytes, /*tell_peer=*/true);
  }
  return std::make_unique<GlooWork>(operation, registry_, abort_handle_);
}

void GlooTransport::send_control(int peer, const ControlMessage& message) {
  {
    std::lock_guard<std::mutex> state(mutex_);
    if (aborted_) throw baton::TransportError("the transport was aborted: " + abort_reason_);
    if (closing_) throw baton::TransportError("the transport is shutting down");
  }
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

void GlooTransport::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    aborted_ = true;
    abort_reason_ = reason;
  }
  fail_everything(": the transport was aborted: " + reason);
  stop_groups("the transport was aborted: " + reason);
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

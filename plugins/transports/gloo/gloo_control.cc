// The gloo transport's control messages (see wire.h) and what happens when a connection
// breaks or the transport stops.
#include "baton/transport_support.h"
#include "gloo_errors.h"
#include "gloo_transport.h"

namespace baton_gloo {

namespace {

// How long a broken connection's operations get to report that they completed before it
// broke (see on_peer_failure).
constexpr std::chrono::milliseconds kPeerFailureGrace(500);

}  // namespace

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
                                baton::format_tag(message.magic) + ")");
      return;
    }
    // Handled before the receive is posted again: posting waits for gloo's connection lock,
    // which gloo's I/O thread holds while it reads a payload (milliseconds for large ones).
    switch (message.kind) {
      case ControlKind::kChannel:
        on_channel(peer, message);
        break;
      case ControlKind::kProbe:
        on_probe(peer, message);
        break;
      case ControlKind::kSizeMismatch:
        on_size_mismatch(peer, message);
        break;
      default:
        on_peer_failure(peer, "rank " + std::to_string(peer) +
                                  " sent a control message of unknown kind " +
                                  std::to_string(static_cast<std::uint64_t>(message.kind)));
        return;
    }
    try {
      link.control_receives[next]->recv(peer, kControlSlot);
    } catch (const std::exception& error) {
      on_peer_failure(peer, explain_gloo_error(error, peer));
      return;
    }
  }
}

void GlooTransport::on_channel(int peer, const ControlMessage& message) {
  std::vector<std::shared_ptr<Operation>> waiting;
  bool valid = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    PeerLink& link = *links_[peer];
    TagState& state = link.receives[message.tag];
    valid = state.channel == kNoChannel && message.value < kMaxChannels;
    if (valid) state.channel = message.value;
  }
  if (!valid) {
    on_peer_failure(peer, "rank " + std::to_string(peer) + " named channel " +
                              std::to_string(message.value) + " for tag " +
                              baton::format_tag(message.tag) +
                              ", which breaks baton's gloo protocol");
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    PeerLink& link = *links_[peer];
    auto found = link.awaiting_channel.find(message.tag);
    if (found != link.awaiting_channel.end()) {
      waiting = std::move(found->second);
      link.awaiting_channel.erase(found);
    }
  }
  for (const std::shared_ptr<Operation>& operation : waiting) {
    operation->set_phase(Operation::Phase::kPosted);
    if (operation->settled()) continue;  // failed while it waited (abort, dead peer)
    try {
      post(operation, message.value);
    } catch (const baton::TransportError&) {
      // post() failed the operation; its caller hears it.
    }
  }
}

void GlooTransport::on_peer_failure(int peer, const std::string& reason) {
  std::vector<std::shared_ptr<Operation>> unposted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;  // our own shutdown closed the connection
    PeerLink& link = *links_[peer];
    if (!link.failure.empty()) return;
    link.failure = reason;
    for (auto& entry : link.awaiting_channel) {
      unposted.insert(unposted.end(), entry.second.begin(), entry.second.end());
    }
    link.awaiting_channel.clear();
  }
  for (auto& operation : unposted) {
    operation->fail(operation->name() + " failed: " + reason);
    operation->interrupt();
  }
  // gloo signals the broken connection to operations still queued, but not to the one whose
  // bytes were under way: that one would wait forever. Operations that completed before the
  // connection broke report it as soon as someone waits; so wait for them all, give them a
  // moment, then fail and release the rest.
  std::vector<std::shared_ptr<Operation>> affected;
  for (const std::shared_ptr<Operation>& operation : registry_->all()) {
    if (operation->what().peer != peer || operation->settled()) continue;
    operation->wait_in_background(*registry_,
                                  OperationRegistry::remover(registry_, operation.get()));
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& link : links_) {
      if (link != nullptr) link->awaiting_channel.clear();  // in the registry, too
    }
  }
  for (const std::shared_ptr<Operation>& operation : registry_->all()) {
    operation->fail(operation->name() + suffix);
    operation->interrupt();
  }
}

}  // namespace baton_gloo

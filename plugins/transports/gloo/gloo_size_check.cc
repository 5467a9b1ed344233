// How the gloo transport finds and clears a size mismatch (see wire.h): a send and a
// receive of different sizes have different slots, so gloo never pairs them; each side
// tells the other what it has once its operation is pending for kProbeAfter, and the
// receiver clears a mismatched pair with scratch buffers so that nothing stays in gloo.
#include <ATen/ATen.h>

#include <algorithm>

#include "gloo_transport.h"

namespace baton_gloo {

namespace {

baton::P2PDirection direction_of(Role role) {
  return role == Role::kSend ? baton::P2PDirection::kSend : baton::P2PDirection::kRecv;
}

Role role_of(baton::P2PDirection direction) {
  return direction == baton::P2PDirection::kSend ? Role::kSend : Role::kReceive;
}

baton::P2PDirection opposite(baton::P2PDirection direction) {
  return direction == baton::P2PDirection::kSend ? baton::P2PDirection::kRecv
                                                 : baton::P2PDirection::kSend;
}

}  // namespace

void GlooTransport::probe(const std::shared_ptr<Operation>& operation) {
  if (operation->kind() != Operation::Kind::kUser) return;
  const baton::P2PDescription& what = operation->what();
  ControlMessage message;
  message.kind = ControlKind::kProbe;
  message.tag = what.tag;
  message.sequence = operation->sequence();
  message.bytes = what.bytes;
  message.role = role_of(what.direction);
  try {
    send_control(what.peer, message);
  } catch (const baton::TransportError&) {
    // The connection is gone or the transport stops: the operation fails for that reason.
  }
}

void GlooTransport::on_probe(int peer, const ControlMessage& message) {
  const baton::P2PDirection mine = opposite(direction_of(message.role));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    PeerLink& link = *links_[peer];
    auto& tags = mine == baton::P2PDirection::kSend ? link.sends : link.receives;
    auto state = tags.find(message.tag);
    const std::uint64_t posted = state == tags.end() ? 0 : state->second.next_sequence;
    if (message.sequence >= posted) {
      // Compared when this rank posts its side.
      link.claims[ClaimKey{mine, message.tag, message.sequence}] = message.bytes;
      return;
    }
  }
  std::shared_ptr<Operation> operation = find_operation(peer, mine, message.tag, message.sequence);
  // Gone or settled: it completed, so the sizes agreed.
  if (operation == nullptr || operation->settled() || operation->what().bytes == message.bytes) {
    return;
  }
  if (mine == baton::P2PDirection::kSend) {
    clear_mismatch(operation, operation->what().bytes, message.bytes);
  } else {
    clear_mismatch(operation, message.bytes, operation->what().bytes);
  }
}

void GlooTransport::on_size_mismatch(int peer, const ControlMessage& message) {
  std::shared_ptr<Operation> receive =
      find_operation(peer, baton::P2PDirection::kRecv, message.tag, message.sequence);
  if (receive == nullptr) return;  // failed and released already (abort, dead peer)
  clear_mismatch(receive, message.bytes, receive->what().bytes);
}

void GlooTransport::on_clear_receive(int peer, const ControlMessage& message) {
  std::uint64_t channel = kNoChannel;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    auto state = links_[peer]->sends.find(message.tag);
    if (state != links_[peer]->sends.end()) channel = state->second.channel;
  }
  if (channel == kNoChannel) return;  // the peer asks about a tag never sent: not ours
  post_scratch(baton::P2PDirection::kSend, peer, message.tag, message.sequence, channel,
               message.bytes);
}

void GlooTransport::clear_mismatch(const std::shared_ptr<Operation>& operation,
                                   std::uint64_t sent_bytes, std::uint64_t received_bytes) {
  if (!operation->begin_clearing_mismatch()) return;
  const baton::P2PDescription& what = operation->what();
  ControlMessage tell;
  tell.tag = what.tag;
  tell.sequence = operation->sequence();
  if (what.direction == baton::P2PDirection::kSend) {
    // The receiver clears the pair: only it can make sure its receive is marked failed
    // before the zeros that complete it arrive.
    tell.kind = ControlKind::kSizeMismatch;
    tell.bytes = sent_bytes;
  } else {
    std::uint64_t channel = kNoChannel;
    bool awaited_channel = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (aborted_ || closing_) return;
      PeerLink& link = *links_[what.peer];
      channel = link.receives[what.tag].channel;
      if (channel == kNoChannel) {
        // Not in gloo yet (the sender has not named the tag's channel), so it can fail at
        // once. This cannot happen while control messages keep their order: a sender names
        // the channel before it probes or posts.
        auto& waiting = link.awaiting_channel[what.tag];
        auto found = std::find(waiting.begin(), waiting.end(), operation);
        awaited_channel = found != waiting.end();
        if (awaited_channel) waiting.erase(found);
      }
    }
    // Worded as on a transport that checks sizes on arrival; the sender completes.
    const std::string message = operation->name() + ": size mismatch: rank " +
                                std::to_string(what.peer) + " sent " + std::to_string(sent_bytes) +
                                " bytes, the receive tensor holds " +
                                std::to_string(received_bytes) + " bytes";
    if (awaited_channel || channel == kNoChannel) {
      operation->fail(message);
      operation->interrupt();
      return;
    }
    operation->fail_when_done(message);
    post_scratch(baton::P2PDirection::kRecv, what.peer, what.tag, operation->sequence(), channel,
                 sent_bytes);
    tell.kind = ControlKind::kClearReceive;
    tell.bytes = received_bytes;
  }
  // From a pool thread: this may be a reader, which must not block on its peer's reader
  // (both could be sending to each other with the other's control receives all taken).
  const int peer = what.peer;
  registry_->waiters.run([this, peer, tell] {
    try {
      send_control(peer, tell);
    } catch (const baton::TransportError&) {
      // The connection is gone or the transport stops: the operations fail for that reason.
    }
  });
}

void GlooTransport::post_scratch(baton::P2PDirection direction, int peer, std::uint64_t tag,
                                 std::uint64_t sequence, std::uint64_t channel,
                                 std::uint64_t bytes) {
  const baton::P2PDescription what{direction, peer, tag, bytes};
  auto scratch = std::make_shared<Operation>(
      rank_, what, at::zeros({static_cast<std::int64_t>(bytes)}, at::kByte), sequence,
      Operation::Kind::kScratch, Operation::Clock::time_point::max());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ || closing_) return;
    scratch->payload = context_->createUnboundBuffer(scratch->data(), bytes);
    registry_->add(scratch);
  }
  try {
    post(scratch, channel);
  } catch (const baton::TransportError&) {
    // The connection is gone: the operations it was to clear fail for that reason.
  }
  scratch->wait_in_background(*registry_, OperationRegistry::remover(registry_, scratch.get()));
}

std::shared_ptr<Operation> GlooTransport::find_operation(int peer, baton::P2PDirection direction,
                                                         std::uint64_t tag,
                                                         std::uint64_t sequence) {
  // Only for probes and mismatches, which are rare: a scan is enough.
  for (std::shared_ptr<Operation>& operation : registry_->all()) {
    const baton::P2PDescription& what = operation->what();
    if (operation->kind() == Operation::Kind::kUser && what.peer == peer &&
        what.direction == direction && what.tag == tag && operation->sequence() == sequence) {
      return operation;
    }
  }
  return nullptr;
}

}  // namespace baton_gloo

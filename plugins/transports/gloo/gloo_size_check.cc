// How the gloo transport finds a size mismatch (see wire.h): a send and a receive of
// different sizes have different slots, so gloo never pairs them (and never aborts the
// process over them); each side tells the other what it has once its operation is pending
// for kProbeAfter, and a side that finds the sizes differ fails its operation naming both,
// tells the peer, and aborts the transport.
#include <ATen/ATen.h>

#include <algorithm>

#include "baton/transport_support.h"
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
    report_mismatch(operation, operation->what().bytes, message.bytes, /*tell_peer=*/true);
  } else {
    report_mismatch(operation, message.bytes, operation->what().bytes, /*tell_peer=*/true);
  }
}

void GlooTransport::on_size_mismatch(int peer, const ControlMessage& message) {
  // The peer compared its operation (tag, sequence), of `bytes`, with this rank's and found
  // they differ; it has aborted, and so does this rank, each naming both sizes.
  const baton::P2PDirection mine = opposite(direction_of(message.role));
  std::shared_ptr<Operation> operation = find_operation(peer, mine, message.tag, message.sequence);
  if (operation == nullptr) {
    abort("rank " + std::to_string(peer) + " found a size mismatch on tag " +
          baton::format_tag(message.tag));
    return;
  }
  const std::uint64_t own = operation->what().bytes;
  report_mismatch(operation, mine == baton::P2PDirection::kSend ? own : message.bytes,
                  mine == baton::P2PDirection::kSend ? message.bytes : own,
                  /*tell_peer=*/false);
}

void GlooTransport::report_mismatch(const std::shared_ptr<Operation>& operation,
                                    std::uint64_t sent_bytes, std::uint64_t received_bytes,
                                    bool tell_peer) {
  if (!operation->begin_reporting_mismatch()) return;
  const baton::P2PDescription& what = operation->what();
  // Worded as on a transport that checks sizes on arrival, from this rank's side.
  const std::string message =
      what.direction == baton::P2PDirection::kRecv
          ? operation->name() + ": size mismatch: rank " + std::to_string(what.peer) + " sent " +
                std::to_string(sent_bytes) + " bytes, the receive tensor holds " +
                std::to_string(received_bytes) + " bytes"
          : operation->name() + ": size mismatch: rank " + std::to_string(what.peer) +
                " receives into " + std::to_string(received_bytes) + " bytes, this message has " +
                std::to_string(sent_bytes) + " bytes";
  operation->fail(message);
  operation->interrupt();
  ControlMessage tell;
  tell.kind = ControlKind::kSizeMismatch;
  tell.tag = what.tag;
  tell.sequence = operation->sequence();
  tell.bytes = what.bytes;
  tell.role = role_of(what.direction);
  const int peer = what.peer;
  // No recovery: the runtime fixes sizes before step 1 and ends the run on any transport
  // error (docs/writing-a-transport.md), so aborting — which fails everything still pending,
  // on both ranks, with the reason — is all that is left to do. From a pool thread: this may
  // be a reader, which must not block on its peer's reader (both could be sending to each
  // other with the other's control receives all taken). The peer hears why before the
  // connection closes: control messages keep their order.
  registry_->waiters.run([this, peer, tell, tell_peer, message] {
    if (tell_peer) {
      try {
        send_control(peer, tell);
      } catch (const baton::TransportError&) {
        // The connection is gone or the transport stops: the peer fails for that reason.
      }
    }
    abort(message);
  });
}

std::shared_ptr<Operation> GlooTransport::find_operation(int peer, baton::P2PDirection direction,
                                                         std::uint64_t tag,
                                                         std::uint64_t sequence) {
  // Only for probes and mismatches, which are rare: a scan is enough.
  for (std::shared_ptr<Operation>& operation : registry_->all()) {
    const baton::P2PDescription& what = operation->what();
    if (what.peer == peer && what.direction == direction && what.tag == tag &&
        operation->sequence() == sequence) {
      return operation;
    }
  }
  return nullptr;
}

}  // namespace baton_gloo

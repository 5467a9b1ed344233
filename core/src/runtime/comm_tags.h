// Internal: the transport tags the executor uses. Activations are tagged by the sending
// stage, gradients by the receiving stage, so both sides compute the same tag; the
// setup handshake has a tag space of its own.
#pragma once

#include <cstdint>

#include "baton/runtime/recv_buffers.h"

namespace baton {

inline std::uint64_t comm_tag(int stage, int microbatch, FlowDirection direction) {
  // 40 bits at most (UCX keeps the top of its 64-bit tags for the sender's rank):
  // stage in bits 21..38, direction in bit 20, microbatch in bits 0..19.
  return (static_cast<std::uint64_t>(stage) << 21) |
         (static_cast<std::uint64_t>(direction == FlowDirection::kBackward) << 20) |
         static_cast<std::uint64_t>(microbatch & 0xFFFFF);
}

// Setup messages between stage `stage` and stage `stage + 1`: `part` 0 = metadata length,
// 1 = metadata, 2 = reply length, 3 = reply text. Bit 39 keeps them apart from activations.
inline std::uint64_t handshake_tag(int stage, int part) {
  return (std::uint64_t{1} << 39) | (static_cast<std::uint64_t>(stage) << 8) |
         static_cast<std::uint64_t>(part);
}

// The transfer probe (transfer_probe.h): parts 0xF0 (ping) and 0xF1 (pong) of the setup
// space, which the handshake (parts 0..3) never uses.
inline std::uint64_t probe_tag(bool pong) {
  return (std::uint64_t{1} << 39) | (pong ? 0xF1u : 0xF0u);
}

}  // namespace baton

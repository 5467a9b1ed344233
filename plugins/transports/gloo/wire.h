// What the gloo transport puts on the wire besides tensor bytes, and where.
//
// A gloo receive meeting a larger payload aborts the process in gloo's I/O thread, and a
// smaller one completes silently with the rest of the tensor unwritten, so no payload may
// ever meet a receive of another size. Checking sizes with an extra message per transfer
// doubles the cost of a small message; instead the size is part of the address:
//
//   * every message goes to the gloo slot (channel, sequence, bytes). `channel` stands for
//     the (peer, tag) pair, `sequence` counts the messages of that tag (same-tag messages
//     keep their order), and `bytes` is the size this side has. A send and a receive of
//     different sizes have different slots: gloo never pairs them, so nothing lands in the
//     wrong buffer, and a transfer of the right size costs what it costs in raw gloo.
//   * channels are numbered by the sender, in the order its tags are first used; the first
//     send with a tag tells the receiver its channel (kChannel). A receive posted before that
//     waits for it; afterwards a tag costs nothing.
//   * a size mismatch shows as a send and a receive that never complete. An operation still
//     pending kProbeAfter after it was posted tells the peer what it has (kProbe); the peer
//     compares with its own operation of that (tag, sequence), now or when it posts it. The
//     side that finds the sizes differ fails its operation naming both sizes, tells the peer
//     (kSizeMismatch), and aborts the transport; the peer does the same on hearing it. There
//     is no recovery: the runtime fixes sizes before step 1 and ends a run on any transport
//     error (docs/writing-a-transport.md).
//
// Control messages travel on one slot (bit 63 set; payload slots never have it) and each
// rank keeps several control receives posted per peer, so they go out without waiting.
#pragma once

#include <chrono>
#include <cstdint>

namespace baton_gloo {

constexpr int kByteBits = 36;
constexpr int kSequenceBits = 12;
constexpr int kChannelBits = 15;

// The largest message: 64 GiB - 1 byte.
constexpr std::uint64_t kMaxMessageBytes = (std::uint64_t{1} << kByteBits) - 1;
// Distinct tags one rank can send to one peer.
constexpr std::uint64_t kMaxChannels = std::uint64_t{1} << kChannelBits;
// Sequences wrap; gloo pairs operations of one slot in the order they were posted, so a
// reused slot is safe unless an older operation of it is still unpaired. At most this many
// operations of one (peer, tag, direction) may be in flight.
constexpr std::uint64_t kSequenceWindow = std::uint64_t{1} << kSequenceBits;
constexpr std::uint64_t kControlSlot = std::uint64_t{1} << 63;

constexpr std::uint64_t payload_slot(std::uint64_t channel, std::uint64_t sequence,
                                     std::uint64_t bytes) {
  return (channel << (kSequenceBits + kByteBits)) |
         ((sequence & (kSequenceWindow - 1)) << kByteBits) | bytes;
}

// How long an operation may be pending before its size is compared with the peer's.
constexpr std::chrono::milliseconds kProbeAfter(100);

// "baton-g4": identifies the protocol (and its version) on the control slot.
constexpr std::uint64_t kControlMagic = 0x6261746f6e2d6734ULL;

enum class ControlKind : std::uint64_t {
  kChannel = 1,       // sender -> receiver: `tag` travels on channel `value`
  kProbe = 2,         // either way: my operation (`tag`, `sequence`), a `role`, has `bytes`
  kSizeMismatch = 3,  // either way: my operation (`tag`, `sequence`), a `role`, has `bytes`,
                      // which yours does not; both ranks abort
};

enum class Role : std::uint64_t { kSend = 0, kReceive = 1 };

struct ControlMessage {
  std::uint64_t magic = kControlMagic;
  ControlKind kind = ControlKind::kChannel;
  std::uint64_t tag = 0;
  std::uint64_t sequence = 0;
  std::uint64_t bytes = 0;
  std::uint64_t value = 0;
  Role role = Role::kSend;
};

}  // namespace baton_gloo

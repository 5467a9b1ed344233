// What the gloo transport puts on the wire besides tensor bytes, and where.
//
// A gloo receive into a buffer of the wrong size corrupts memory or aborts the process in
// gloo's I/O thread, so no payload may ever meet a receive of another size. The protocol:
//
//   * every message has its own gloo slot: (sequence << 40) | tag, where `sequence` counts the
//     messages of that (peer, tag) on each side. Same-tag messages keep their order because
//     they are matched by sequence, and a receive that was rejected can never swallow a later
//     message: nothing is ever sent to its slot again.
//   * irecv() posts the payload receive at once (gloo tells the sender "receive ready", as in
//     raw gloo) and sends the sender a kReceivePosted control message: (tag, sequence,
//     bytes).
//   * isend() sends the payload once the receiver's kReceivePosted for its slot is there, and
//     only if the sizes agree. Usually it is already there when the send is posted, so a
//     message costs one trip, as in raw gloo. If the sizes differ the payload is not sent;
//     the receiver gets a kSizeMismatch instead and fails that receive, naming both sizes.
//
// Control messages travel on one slot (bit 63 set; user slots never have it) and each rank
// keeps several control receives posted per peer, so they go out without waiting.
#pragma once

#include <cstdint>

namespace baton_gloo {

constexpr int kTagBits = 40;
constexpr int kSequenceBits = 23;
constexpr std::uint64_t kMaxUserTag = (std::uint64_t{1} << kTagBits) - 1;
constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << kSequenceBits) - 1;
constexpr std::uint64_t kControlSlot = std::uint64_t{1} << 63;

// The slot of the `sequence`-th message with `tag` between two ranks (sequence wraps after
// 2^23 messages of one tag, by which time the earlier message is long gone).
constexpr std::uint64_t payload_slot(std::uint64_t tag, std::uint64_t sequence) {
  return ((sequence & kSequenceMask) << kTagBits) | tag;
}

// "baton-g2": identifies the protocol (and its version) on the control slot.
constexpr std::uint64_t kControlMagic = 0x6261746f6e2d6732ULL;

enum class ControlKind : std::uint64_t {
  kReceivePosted = 1,  // receiver -> sender: a receive of `bytes` waits in `slot`
  kSizeMismatch = 2,   // sender -> receiver: the message for `slot` has `bytes`; not sent
};

struct ControlMessage {
  std::uint64_t magic = kControlMagic;
  ControlKind kind = ControlKind::kReceivePosted;
  std::uint64_t slot = 0;
  std::uint64_t bytes = 0;
};

}  // namespace baton_gloo

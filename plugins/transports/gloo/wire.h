// What the gloo transport puts on the wire besides tensor bytes.
//
// gloo's receive into a buffer of the wrong size corrupts memory or aborts the process in
// gloo's I/O thread, so a sender first announces every message — (tag, byte count) — on a
// control slot, and the receiver posts the payload receive only after checking the size.
// Payloads travel on slot = tag. Per peer, announcements are sent in isend() order and
// read in that order, which is what keeps same-tag messages in order.
#pragma once

#include <cstdint>

namespace baton_gloo {

// Reserved for announcements; a user tag may not use it.
constexpr std::uint64_t kAnnounceSlot = ~std::uint64_t{0};

// "baton-g1": identifies the protocol (and its version) on the control slot.
constexpr std::uint64_t kAnnounceMagic = 0x6261746f6e2d6731ULL;

struct Announcement {
  std::uint64_t magic = kAnnounceMagic;
  std::uint64_t tag = 0;
  std::uint64_t bytes = 0;
};

}  // namespace baton_gloo

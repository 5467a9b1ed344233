// How a (sender rank, user tag) pair is packed into UCX's 64-bit tag.
//
// UCP matches receives on the whole tag under a mask; it does not know which endpoint a
// message came from. So the sender's rank travels in the upper bits, and a receive from
// rank r matches (r, tag) exactly: a message from another peer with the same user tag never
// lands in the wrong tensor. UCP keeps messages of one sender with one tag in send order,
// which is what gives same-(peer, tag) ordering.
//
//   bit 63     | 62 ........ 40 | 39 ........................ 0
//   collective |   sender rank  |   user tag, or the group's id
//
// Bit 63 marks the transport's own all-reduce messages (ucx_all_reduce.cc), so that the whole
// user tag space stays the caller's.
#pragma once

#include <cstdint>

namespace baton_ucx {

constexpr int kUserTagBits = 40;
constexpr int kRankBits = 63 - kUserTagBits;  // bit 63 is the collective bit
constexpr std::uint64_t kUserTagMask = (std::uint64_t{1} << kUserTagBits) - 1;
// The largest user tag is reserved for the transport's own notices (an abort, see
// ucx_transport.h); users get every tag below it.
constexpr std::uint64_t kControlTag = kUserTagMask;
constexpr std::uint64_t kMaxUserTag = kControlTag - 1;
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << kRankBits;

// Every bit matters when matching a user message.
constexpr std::uint64_t kFullTagMask = ~std::uint64_t{0};

constexpr std::uint64_t kCollectiveBit = std::uint64_t{1} << 63;

// Callers check `user_tag <= kMaxUserTag` and `rank < kMaxWorldSize` first.
constexpr std::uint64_t wire_tag(int sender_rank, std::uint64_t user_tag) {
  return (static_cast<std::uint64_t>(sender_rank) << kUserTagBits) | user_tag;
}

// A message of the all-reduces of group `group_id` (below 2^40).
constexpr std::uint64_t collective_wire_tag(int sender_rank, std::uint64_t group_id) {
  return kCollectiveBit | wire_tag(sender_rank, group_id);
}

}  // namespace baton_ucx

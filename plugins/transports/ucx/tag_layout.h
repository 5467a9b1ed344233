// How a (sender rank, user tag) pair is packed into UCX's 64-bit tag.
//
// UCP matches receives on the whole tag under a mask; it does not know which endpoint a
// message came from. So the sender's rank travels in the upper bits, and a receive from
// rank r matches (r, tag) exactly: a message from another peer with the same user tag never
// lands in the wrong tensor. UCP keeps messages of one sender with one tag in send order,
// which is what gives same-(peer, tag) ordering.
//
//   bit 63 ........ 40 | 39 ........................ 0
//       sender rank    |          user tag
#pragma once

#include <cstdint>

namespace baton_ucx {

constexpr int kRankBits = 24;
constexpr int kUserTagBits = 64 - kRankBits;
constexpr std::uint64_t kUserTagMask = (std::uint64_t{1} << kUserTagBits) - 1;
// The largest user tag is reserved for the transport's own notices (an abort, see
// ucx_transport.h); users get every tag below it.
constexpr std::uint64_t kControlTag = kUserTagMask;
constexpr std::uint64_t kMaxUserTag = kControlTag - 1;
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << kRankBits;

// Every bit matters when matching a user message.
constexpr std::uint64_t kFullTagMask = ~std::uint64_t{0};

// Callers check `user_tag <= kMaxUserTag` and `rank < kMaxWorldSize` first.
constexpr std::uint64_t wire_tag(int sender_rank, std::uint64_t user_tag) {
  return (static_cast<std::uint64_t>(sender_rank) << kUserTagBits) | user_tag;
}

}  // namespace baton_ucx

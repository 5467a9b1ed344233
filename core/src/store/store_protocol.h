// The wire format of baton's TCP store, shared by its server and its client.
//
// A connection starts with a hello (magic, then the run's token) that the server answers
// before it reads anything else; a peer that is not a rank of this run is refused there.
// Then requests, each answered in order:
//   SET key value   -> OK
//   GET key         -> FOUND value | MISSING      (the client polls until its deadline)
//   ADD key delta   -> OK new-value | REFUSED text
// Integers are little-endian; a key is u32 length + bytes, a value u64 length + bytes.
// Every length is checked against the caps below before a byte of it is buffered, so a
// peer that claims 8 GiB is refused, not served.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace baton::store_protocol {

inline constexpr char kMagic[8] = {'b', 'a', 't', 'o', 'n', 's', 't', '1'};

inline constexpr std::size_t kMaxTokenBytes = 256;
inline constexpr std::size_t kMaxKeyBytes = 4096;
// Addresses, NCCL ids, cuts, per-step progress: kilobytes. A cap far above any of them.
inline constexpr std::size_t kMaxValueBytes = 16u << 20;
// What one server keeps in all (keys and values).
inline constexpr std::size_t kMaxStoredBytes = 512u << 20;
inline constexpr std::size_t kMaxConnections = 1024;

enum class Op : std::uint8_t { kSet = 1, kGet = 2, kAdd = 3, kRemove = 4 };
enum class Reply : std::uint8_t { kOk = 0, kFound = 1, kMissing = 2, kRefused = 3 };

inline void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}
inline void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}
inline std::uint32_t get_u32(const char* in) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::uint32_t(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}
inline std::uint64_t get_u64(const char* in) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}

}  // namespace baton::store_protocol

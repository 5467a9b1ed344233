// What a peer of the TCP store may send: any bytes, in any split, are served or refused;
// the table never keeps more than its cap, and a refused peer gets nothing more.
#include <cstddef>
#include <cstdint>
#include <string>

#include "store_protocol.h"
#include "store_session.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // The first byte says whether the peer starts with a valid hello and where to split the
  // rest into two reads.
  const bool hello = data[0] & 1;
  const std::size_t split = size > 1 ? data[0] % size : 0;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (hello) {
    std::string greeting(baton::store_protocol::kMagic, sizeof(baton::store_protocol::kMagic));
    baton::store_protocol::put_u32(greeting, 5);
    bytes = greeting + "token" + bytes;
  }
  baton::StoreKeyValues table;
  baton::StorePeer peer;
  peer.in = bytes.substr(0, split);
  bool open = table.serve(peer, "token");
  if (open) {
    peer.in += bytes.substr(split);
    open = table.serve(peer, "token");
  }
  if (table.stored_bytes() > baton::store_protocol::kMaxStoredBytes) __builtin_trap();
  return 0;
}

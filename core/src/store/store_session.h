// The store's protocol logic, apart from sockets: one peer's bytes in, its replies out, and
// the key-value table they act on. The server feeds it what it reads; the fuzzer feeds it
// anything (tests/fuzz).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>

namespace baton {

// What the server keeps for one peer.
struct StorePeer {
  bool authenticated = false;
  bool closing = false;  // refused: close once `out` is sent
  std::string in;        // received, not yet decoded
  std::string out;       // replies, not yet sent
};

class StoreKeyValues {
 public:
  // Decodes every whole request in `peer.in` and appends the replies to `peer.out`.
  // Returns false when the peer broke the protocol (a refusal is then the last reply).
  bool serve(StorePeer& peer, const std::string& token);

  std::size_t stored_bytes() const { return stored_bytes_; }

 private:
  bool hello(StorePeer& connection, const std::string& token);

  std::unordered_map<std::string, std::string> values_;
  std::size_t stored_bytes_ = 0;
};

}  // namespace baton

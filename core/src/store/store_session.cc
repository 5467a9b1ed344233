#include "store_session.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "store_protocol.h"

namespace baton {
namespace {

namespace wire = store_protocol;

// Equal length and bytes, in time independent of where they differ.
bool same_token(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

void refuse(StorePeer& connection, const std::string& why) {
  connection.out += static_cast<char>(wire::Reply::kRefused);
  wire::put_u32(connection.out, static_cast<std::uint32_t>(why.size()));
  connection.out += why;
}

}  // namespace

bool StoreKeyValues::hello(StorePeer& connection, const std::string& token) {
  std::string& in = connection.in;
  if (in.size() < sizeof(wire::kMagic)) return true;
  if (std::memcmp(in.data(), wire::kMagic, sizeof(wire::kMagic)) != 0) {
    refuse(connection, "not a baton store client (or another baton version)");
    return false;
  }
  if (in.size() < sizeof(wire::kMagic) + 4) return true;
  const std::uint32_t token_bytes = wire::get_u32(in.data() + sizeof(wire::kMagic));
  if (token_bytes > wire::kMaxTokenBytes) {
    refuse(connection, "hello claims a token of " + std::to_string(token_bytes) + " bytes");
    return false;
  }
  const std::size_t hello_bytes = sizeof(wire::kMagic) + 4 + token_bytes;
  if (in.size() < hello_bytes) return true;
  if (!same_token(in.substr(sizeof(wire::kMagic) + 4, token_bytes), token)) {
    refuse(connection,
           "this store belongs to another run (its token differs: check the run id, "
           "BATON_STORE_TOKEN, world.address and world.port)");
    return false;
  }
  in.erase(0, hello_bytes);
  connection.authenticated = true;
  connection.out += static_cast<char>(wire::Reply::kOk);
  return true;
}

// Long on purpose: one switch over the protocol's requests, each case the whole of what the
// server does for it, so that every bound on a client's bytes is checked in one place.
bool StoreKeyValues::serve(StorePeer& connection, const std::string& token) {
  if (!connection.authenticated) {
    if (!hello(connection, token)) return false;
    if (!connection.authenticated) return true;
  }
  std::string& in = connection.in;
  for (;;) {
    if (in.size() < 5) return true;
    const auto op = static_cast<wire::Op>(static_cast<unsigned char>(in[0]));
    if (op != wire::Op::kSet && op != wire::Op::kGet && op != wire::Op::kAdd &&
        op != wire::Op::kRemove) {
      refuse(connection, "unknown request " + std::to_string(static_cast<int>(in[0])));
      return false;
    }
    const std::uint32_t key_bytes = wire::get_u32(in.data() + 1);
    if (key_bytes == 0 || key_bytes > wire::kMaxKeyBytes) {
      refuse(connection, "a key of " + std::to_string(key_bytes) + " bytes (1 to " +
                             std::to_string(wire::kMaxKeyBytes) + " allowed)");
      return false;
    }
    const std::size_t key_end = 5 + key_bytes;
    if (op == wire::Op::kRemove) {
      if (in.size() < key_end) return true;
      const auto found = values_.find(in.substr(5, key_bytes));
      if (found == values_.end()) {
        connection.out += static_cast<char>(wire::Reply::kMissing);
      } else {
        stored_bytes_ -= found->first.size() + found->second.size();
        values_.erase(found);
        connection.out += static_cast<char>(wire::Reply::kOk);
      }
      in.erase(0, key_end);
      continue;
    }
    if (op == wire::Op::kGet) {
      if (in.size() < key_end) return true;
      const auto found = values_.find(in.substr(5, key_bytes));
      if (found == values_.end()) {
        connection.out += static_cast<char>(wire::Reply::kMissing);
      } else {
        connection.out += static_cast<char>(wire::Reply::kFound);
        wire::put_u64(connection.out, found->second.size());
        connection.out += found->second;
      }
      in.erase(0, key_end);
      continue;
    }
    if (in.size() < key_end + 8) return true;
    const std::uint64_t number = wire::get_u64(in.data() + key_end);
    if (op == wire::Op::kAdd) {
      std::string key = in.substr(5, key_bytes);
      in.erase(0, key_end + 8);
      auto found = values_.find(key);
      std::int64_t current = 0;
      if (found != values_.end() && !found->second.empty()) {
        char* end = nullptr;
        errno = 0;
        current = std::strtoll(found->second.c_str(), &end, 10);
        if (errno != 0 || end != found->second.c_str() + found->second.size()) {
          refuse(connection, "add: the key holds a value that is not an integer");
          continue;
        }
      }
      const std::string next =
          std::to_string(static_cast<std::int64_t>(static_cast<std::uint64_t>(current) + number));
      const std::size_t before = found == values_.end() ? 0 : key.size() + found->second.size();
      if (stored_bytes_ - before + key.size() + next.size() > wire::kMaxStoredBytes) {
        refuse(connection, "the store is full (" + std::to_string(wire::kMaxStoredBytes) +
                               " bytes kept in all)");
        continue;
      }
      stored_bytes_ = stored_bytes_ - before + key.size() + next.size();
      values_[std::move(key)] = next;
      connection.out += static_cast<char>(wire::Reply::kOk);
      wire::put_u64(connection.out, static_cast<std::uint64_t>(std::stoll(next)));
      continue;
    }
    // SET: the value's length is checked before any of it is kept.
    if (number > wire::kMaxValueBytes) {
      refuse(connection, "a value of " + std::to_string(number) + " bytes (at most " +
                             std::to_string(wire::kMaxValueBytes) + ")");
      return false;
    }
    const std::size_t request_end = key_end + 8 + static_cast<std::size_t>(number);
    if (in.size() < request_end) return true;
    std::string key = in.substr(5, key_bytes);
    const auto existing = values_.find(key);
    const std::size_t replaced =
        existing == values_.end() ? 0 : existing->second.size() + existing->first.size();
    if (stored_bytes_ - replaced + key_bytes + number > wire::kMaxStoredBytes) {
      in.erase(0, request_end);
      refuse(connection,
             "the store is full (" + std::to_string(wire::kMaxStoredBytes) + " bytes kept in all)");
      continue;
    }
    stored_bytes_ = stored_bytes_ - replaced + key_bytes + number;
    values_[std::move(key)] = in.substr(key_end + 8, static_cast<std::size_t>(number));
    connection.out += static_cast<char>(wire::Reply::kOk);
    in.erase(0, request_end);
  }
}

}  // namespace baton

#include "store_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "baton/log.h"
#include "baton/store.h"
#include "store_protocol.h"

namespace baton {
namespace {

namespace wire = store_protocol;
using Clock = std::chrono::steady_clock;

// A peer that has not said who it is within this long is dropped.
constexpr std::chrono::seconds kHelloDeadline(10);
// A peer that does not read its replies is not read from while this much waits for it.
constexpr std::size_t kMaxPendingReplyBytes = 2 * wire::kMaxValueBytes;

std::string errno_text() {
  return std::strerror(errno);
}

void set_non_blocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

struct Connection {
  int fd = -1;
  bool authenticated = false;
  bool closing = false;  // close once `out` is sent
  Clock::time_point accepted;
  std::string in;
  std::string out;
};

// Equal length and bytes, in time independent of where they differ.
bool same_token(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

void refuse(Connection& connection, const std::string& why) {
  connection.out += static_cast<char>(wire::Reply::kRefused);
  wire::put_u32(connection.out, static_cast<std::uint32_t>(why.size()));
  connection.out += why;
}

class KeyValues {
 public:
  // Requests decoded from `connection.in`, answered into `connection.out`. Returns false
  // when the peer broke the protocol (it is then refused and closed).
  bool serve(Connection& connection, const std::string& token);

 private:
  bool hello(Connection& connection, const std::string& token);

  std::unordered_map<std::string, std::string> values_;
  std::size_t stored_bytes_ = 0;
};

bool KeyValues::hello(Connection& connection, const std::string& token) {
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

bool KeyValues::serve(Connection& connection, const std::string& token) {
  if (!connection.authenticated) {
    if (!hello(connection, token)) return false;
    if (!connection.authenticated) return true;
  }
  std::string& in = connection.in;
  for (;;) {
    if (in.size() < 5) return true;
    const auto op = static_cast<wire::Op>(static_cast<unsigned char>(in[0]));
    if (op != wire::Op::kSet && op != wire::Op::kGet && op != wire::Op::kAdd) {
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

// Resolves `host` (a name or a numeric address) for binding; "" or "*": every interface.
addrinfo* resolve_for_binding(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  const bool everywhere = host.empty() || host == "*";
  const int status =
      getaddrinfo(everywhere ? nullptr : host.c_str(), service.c_str(), &hints, &result);
  if (status != 0) {
    throw StoreError("tcp store: cannot resolve '" + host +
                     "' to host the store: " + gai_strerror(status));
  }
  return result;
}

}  // namespace

StoreServer::StoreServer(const std::string& host, int port, std::string token)
    : token_(std::move(token)) {
  const std::string where = (host.empty() ? std::string("*") : host) + ":" + std::to_string(port);
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> addresses(resolve_for_binding(host, port),
                                                           freeaddrinfo);
  std::string failures;
  for (addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
    const int fd = socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, address->ai_addr, address->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      listen_fd_ = fd;
      break;
    }
    failures += (failures.empty() ? "" : "; ") + errno_text();
    close(fd);
  }
  if (listen_fd_ < 0) {
    const bool in_use = failures.find(std::strerror(EADDRINUSE)) != std::string::npos;
    throw StoreError("cannot host the tcp store at " + where + ": " + failures +
                     (in_use ? " (another run, or another store, uses this port: choose another "
                               "world.port, or 0 for a free one)"
                             : ""));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  set_non_blocking(listen_fd_);
  if (pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(listen_fd_);
    throw StoreError("tcp store: pipe failed: " + errno_text());
  }
  thread_ = std::thread([this] { serve(); });
  BATON_LOG_DEBUG("store", "hosting the tcp store at " << host << ":" << port_);
}

StoreServer::~StoreServer() {
  const char stop = 1;
  [[maybe_unused]] const ssize_t written = write(wake_fds_[1], &stop, 1);
  if (thread_.joinable()) thread_.join();
  close(wake_fds_[0]);
  close(wake_fds_[1]);
  close(listen_fd_);
}

void StoreServer::serve() {
  KeyValues store;
  std::map<int, Connection> connections;
  std::vector<pollfd> fds;
  char buffer[64 * 1024];
  for (;;) {
    fds.clear();
    fds.push_back({wake_fds_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto& [fd, connection] : connections) {
      short events = 0;
      if (!connection.closing && connection.out.size() < kMaxPendingReplyBytes) events |= POLLIN;
      if (!connection.out.empty()) events |= POLLOUT;
      fds.push_back({fd, events, 0});
    }
    if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) {
      for (;;) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        if (connections.size() >= wire::kMaxConnections) {
          close(fd);
          continue;
        }
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        Connection connection;
        connection.fd = fd;
        connection.accepted = Clock::now();
        connections.emplace(fd, std::move(connection));
      }
    }
    const auto now = Clock::now();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      Connection& connection = connections.at(fds[i].fd);
      bool drop = (fds[i].revents & (POLLERR | POLLNVAL)) != 0;
      if (!drop && (fds[i].revents & (POLLIN | POLLHUP))) {
        const ssize_t n = recv(connection.fd, buffer, sizeof(buffer), 0);
        if (n > 0) {
          connection.in.append(buffer, static_cast<std::size_t>(n));
          if (!store.serve(connection, token_)) connection.closing = true;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          drop = true;
        }
      }
      if (!drop && !connection.out.empty()) {
        const ssize_t n =
            send(connection.fd, connection.out.data(), connection.out.size(), MSG_NOSIGNAL);
        if (n > 0) {
          connection.out.erase(0, static_cast<std::size_t>(n));
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          drop = true;
        }
      }
      if (connection.closing && connection.out.empty()) drop = true;
      if (!connection.authenticated && now - connection.accepted > kHelloDeadline) drop = true;
      if (drop) {
        close(connection.fd);
        connections.erase(fds[i].fd);
      }
    }
  }
  for (auto& [fd, connection] : connections) close(fd);
}

}  // namespace baton

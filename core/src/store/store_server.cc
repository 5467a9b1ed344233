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
#include "store_session.h"

namespace baton {
namespace {

namespace wire = store_protocol;
using Clock = std::chrono::steady_clock;

// A peer that has not said who it is within this long is dropped.
constexpr std::chrono::seconds kHelloDeadline(10);
// A peer that does not read its replies is not read from while this much waits for it.
constexpr std::size_t kMaxPendingReplyBytes = 2 * wire::kMaxValueBytes;

struct Connection {
  int fd = -1;
  Clock::time_point accepted;
  StorePeer peer;
};

std::string errno_text() {
  return std::strerror(errno);
}

void set_non_blocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
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
  StoreKeyValues store;
  std::map<int, Connection> connections;
  std::vector<pollfd> fds;
  char buffer[64 * 1024];
  for (;;) {
    fds.clear();
    fds.push_back({wake_fds_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto& [fd, connection] : connections) {
      short events = 0;
      if (!connection.peer.closing && connection.peer.out.size() < kMaxPendingReplyBytes)
        events |= POLLIN;
      if (!connection.peer.out.empty()) events |= POLLOUT;
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
          connection.peer.in.append(buffer, static_cast<std::size_t>(n));
          if (!store.serve(connection.peer, token_)) connection.peer.closing = true;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          drop = true;
        }
      }
      if (!drop && !connection.peer.out.empty()) {
        const ssize_t n = send(connection.fd, connection.peer.out.data(),
                               connection.peer.out.size(), MSG_NOSIGNAL);
        if (n > 0) {
          connection.peer.out.erase(0, static_cast<std::size_t>(n));
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          drop = true;
        }
      }
      if (connection.peer.closing && connection.peer.out.empty()) drop = true;
      if (!connection.peer.authenticated && now - connection.accepted > kHelloDeadline) drop = true;
      if (drop) {
        close(connection.fd);
        connections.erase(fds[i].fd);
      }
    }
  }
  for (auto& [fd, connection] : connections) close(fd);
}

}  // namespace baton

// baton's TCP store client (and, for the rank or launcher that hosts it, its server).
// get() polls: GET answers at once, found or missing, so a timed-out wait leaves nothing in
// flight on the socket. Every socket operation has the store's deadline.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "baton/durations.h"
#include "baton/stores.h"
#include "store_protocol.h"
#include "store_server.h"

namespace baton {

namespace wire = store_protocol;
using Clock = std::chrono::steady_clock;

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

// One non-blocking connect attempt to any of `host`'s addresses, within `deadline`.
// Returns the socket, or -1 with `why` set.
int try_connect(const std::string& host, int port, Clock::time_point deadline, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const int status = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
  if (status != 0) {
    *why = std::string("cannot resolve '") + host + "': " + gai_strerror(status);
    return -1;
  }
  int connected = -1;
  for (addrinfo* address = addresses; address != nullptr && connected < 0;
       address = address->ai_next) {
    const int fd =
        socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    int result = connect(fd, address->ai_addr, address->ai_addrlen);
    if (result != 0 && errno == EINPROGRESS) {
      pollfd wait{fd, POLLOUT, 0};
      if (poll(&wait, 1, remaining_ms(deadline)) == 1) {
        int error = 0;
        socklen_t length = sizeof(error);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
        result = error == 0 ? 0 : -1;
        errno = error;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (result == 0) {
      connected = fd;
    } else {
      *why = errno_text();
      close(fd);
    }
  }
  freeaddrinfo(addresses);
  if (connected >= 0) {
    const int one = 1;
    setsockopt(connected, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return connected;
}

}  // namespace

class TcpStore::Impl {
 public:
  std::unique_ptr<StoreServer> server;  // when this process hosts the store
  int fd = -1;
  // One socket: requests from several threads (progress in the background, checkpoints on
  // the main thread) must not interleave on it.
  std::mutex mutex;
  std::string host;
  int port = 0;
  std::chrono::milliseconds timeout{0};

  ~Impl() {
    if (fd >= 0) close(fd);
  }

  std::string where() const { return "tcp store " + host + ":" + std::to_string(port); }

  [[noreturn]] void lost(const std::string& what) {
    fail("store: " + what + " (" + where() +
         "): the store's host (the launcher, or rank 0) stopped or cut the "
         "connection");
  }

  // After a timeout or a broken connection the stream is out of step: no later request may
  // read an earlier one's answer.
  [[noreturn]] void fail(const std::string& text) {
    if (fd >= 0) close(fd);
    fd = -1;
    throw StoreError(text);
  }

  // Waits until the socket is ready for `events`; false once `deadline` has passed (poll's
  // own wait is capped, so a long deadline is waited for in several polls).
  bool ready(short events, Clock::time_point deadline) const {
    for (;;) {
      pollfd wait{fd, events, 0};
      if (poll(&wait, 1, remaining_ms(deadline)) != 0) return true;
      if (Clock::now() >= deadline) return false;
    }
  }

  void send_all(const std::string& bytes, const std::string& what) {
    if (fd < 0) {
      throw StoreError("store: " + what + ": the connection to the " + where() +
                       " was lost after an earlier error");
    }
    const auto deadline = Clock::now() + timeout;
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!ready(POLLOUT, deadline)) {
          fail("store: " + what + " could not be sent within " + format_seconds(timeout) + " (" +
               where() + ")");
        }
        continue;
      }
      lost(what);
    }
  }

  void receive_exactly(char* into, std::size_t size, const std::string& what) {
    const auto deadline = Clock::now() + timeout;
    std::size_t received = 0;
    while (received < size) {
      const ssize_t n = ::recv(fd, into + received, size - received, 0);
      if (n > 0) {
        received += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!ready(POLLIN, deadline)) {
          fail("store: no answer to " + what + " within " + format_seconds(timeout) + " (" +
               where() + ")");
        }
        continue;
      }
      lost(what);
    }
  }

  wire::Reply receive_reply(const std::string& what) {
    char reply = 0;
    receive_exactly(&reply, 1, what);
    const auto kind = static_cast<wire::Reply>(static_cast<unsigned char>(reply));
    if (kind == wire::Reply::kRefused) {
      char length[4];
      receive_exactly(length, 4, what);
      std::string text(std::min<std::uint32_t>(wire::get_u32(length), 4096), '\0');
      receive_exactly(text.data(), text.size(), what);
      throw StoreError("store: " + what + " was refused by the " + where() + ": " + text);
    }
    return kind;
  }

  // Connects (retrying while the host starts) and says who it is.
  void connect_and_hello(const std::string& token) {
    const auto deadline = Clock::now() + timeout;
    std::string why;
    std::chrono::milliseconds pause(10);
    while ((fd = try_connect(host, port, deadline, &why)) < 0) {
      if (Clock::now() + pause >= deadline) {
        throw StoreError("cannot reach the " + where() + " within " + format_seconds(timeout) +
                         ": " + why +
                         " (is the launcher or rank 0 running, and world.address/world.port "
                         "the same on every rank?)");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
    std::string hello(wire::kMagic, sizeof(wire::kMagic));
    wire::put_u32(hello, static_cast<std::uint32_t>(token.size()));
    hello += token;
    send_all(hello, "the hello");
    if (receive_reply("the hello") != wire::Reply::kOk) lost("the hello");
  }
};

TcpStore::TcpStore(const TcpStoreOptions& options) : impl_(std::make_unique<Impl>()) {
  if (options.port < 0 || options.port > 65535) {
    throw StoreError("tcp store: port " + std::to_string(options.port) + " is not a TCP port");
  }
  if (!options.is_server && options.port == 0) {
    throw StoreError("tcp store: a client needs the server's port; 0 only works for the host");
  }
  if (options.token.size() > wire::kMaxTokenBytes) {
    throw StoreError("tcp store: the token is " + std::to_string(options.token.size()) +
                     " bytes, at most " + std::to_string(wire::kMaxTokenBytes) + " are allowed");
  }
  impl_->host = options.host;
  impl_->port = options.port;
  impl_->timeout = options.timeout;
  if (options.is_server) {
    impl_->server = std::make_unique<StoreServer>(options.host, options.port, options.token);
    impl_->port = impl_->server->port();
  }
  impl_->connect_and_hello(options.token);
}

TcpStore::~TcpStore() = default;

int TcpStore::port() const {
  return impl_->port;
}

const std::string& TcpStore::host() const {
  return impl_->host;
}

namespace {

std::string request_head(wire::Op op, const std::string& key) {
  if (key.empty() || key.size() > wire::kMaxKeyBytes) {
    throw StoreError("store: key '" + key.substr(0, 64) + "' has " + std::to_string(key.size()) +
                     " bytes; keys have 1 to " + std::to_string(wire::kMaxKeyBytes));
  }
  std::string head(1, static_cast<char>(op));
  wire::put_u32(head, static_cast<std::uint32_t>(key.size()));
  head += key;
  return head;
}

}  // namespace

void TcpStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  if (value.size() > wire::kMaxValueBytes) {
    throw StoreError("store: set('" + key + "'): a value of " + std::to_string(value.size()) +
                     " bytes; the store keeps at most " + std::to_string(wire::kMaxValueBytes));
  }
  std::string request = request_head(wire::Op::kSet, key);
  wire::put_u64(request, value.size());
  request.append(value.begin(), value.end());
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->send_all(request, "set('" + key + "')");
  impl_->receive_reply("set('" + key + "')");
}

std::vector<std::uint8_t> TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string request = request_head(wire::Op::kGet, key);
  const std::string what = "get('" + key + "')";
  std::chrono::milliseconds pause(1);
  for (;;) {
    {
      const std::lock_guard<std::mutex> lock(impl_->mutex);
      impl_->send_all(request, what);
      if (impl_->receive_reply(what) == wire::Reply::kFound) {
        char length[8];
        impl_->receive_exactly(length, 8, what);
        const std::uint64_t size = wire::get_u64(length);
        if (size > wire::kMaxValueBytes) impl_->lost(what + " answered a value too large");
        std::vector<std::uint8_t> value(static_cast<std::size_t>(size));
        impl_->receive_exactly(reinterpret_cast<char*>(value.data()), value.size(), what);
        return value;
      }
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      throw StoreError("store: key '" + key + "' was not set within " + format_seconds(timeout) +
                       " (" + impl_->where() + ")");
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

bool TcpStore::remove(const std::string& key) {
  const std::string request = request_head(wire::Op::kRemove, key);
  const std::string what = "remove('" + key + "')";
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->send_all(request, what);
  return impl_->receive_reply(what) == wire::Reply::kOk;
}

std::int64_t TcpStore::add(const std::string& key, std::int64_t delta) {
  std::string request = request_head(wire::Op::kAdd, key);
  wire::put_u64(request, static_cast<std::uint64_t>(delta));
  const std::string what = "add('" + key + "')";
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->send_all(request, what);
  impl_->receive_reply(what);
  char value[8];
  impl_->receive_exactly(value, 8, what);
  return static_cast<std::int64_t>(wire::get_u64(value));
}

}  // namespace baton

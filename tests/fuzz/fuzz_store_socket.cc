// The TCP store's server as a peer meets it: a real server on loopback, fed any bytes over a
// real socket in any number of writes, with or without a valid hello, the connection closed
// at any point. Whatever a connection sends, the server must stay up and keep serving a rank
// of its run: after each input a real client sets, gets and adds a key. (fuzz_store_protocol
// covers the parser alone; this covers the socket loop around it.)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "baton/stores.h"
#include "store_protocol.h"

namespace {

constexpr char kToken[] = "fuzz-token";

baton::TcpStore& server() {
  static baton::TcpStore* store = [] {
    baton::TcpStoreOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.is_server = true;
    options.token = kToken;
    options.timeout = std::chrono::milliseconds(5000);
    return new baton::TcpStore(options);
  }();
  return *store;
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) __builtin_trap();
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int failed = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  if (failed != 0 && errno == EINTR) {
    // libFuzzer's timer signal interrupted the connect, which goes on: wait for its outcome.
    pollfd done{fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof(error);
    failed = ::poll(&done, 1, 5000) != 1 ||
             ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0;
    if (failed) errno = error;
  }
  if (failed != 0) {
    std::fprintf(stderr, "cannot connect to the store: %s\n", std::strerror(errno));
    __builtin_trap();  // the server stopped accepting
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // Closed with a reset, not into TIME_WAIT: a fuzzer opens thousands of connections a
  // second, which would use up this machine's ephemeral ports within a minute.
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  return fd;
}

// Reads what the server answers, without waiting long for more: the server may answer
// nothing (a partial request) or close the connection (a refused peer).
void drain(int fd, int wait_ms) {
  char buffer[4096];
  for (;;) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, wait_ms) <= 0) return;
    if (::recv(fd, buffer, sizeof(buffer), 0) <= 0) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace wire = baton::store_protocol;
  if (size < 2) return 0;
  baton::TcpStore& store = server();
  // Byte 0: whether the bytes follow a valid hello, and whether the peer half-closes at the
  // end; byte 1: into how many writes the rest is split.
  const bool hello = data[0] & 1;
  const bool half_close = data[0] & 2;
  const std::size_t writes = 1 + data[1] % 8;
  std::string bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  if (hello) {
    std::string greeting(wire::kMagic, sizeof(wire::kMagic));
    wire::put_u32(greeting, sizeof(kToken) - 1);
    bytes = greeting + kToken + bytes;
  }
  const int fd = connect_to(store.port());
  const std::size_t chunk = bytes.size() / writes + 1;
  for (std::size_t at = 0; at < bytes.size(); at += chunk) {
    const std::string part = bytes.substr(at, chunk);
    if (::send(fd, part.data(), part.size(), MSG_NOSIGNAL) < 0) break;  // refused and closed
    drain(fd, 0);
  }
  if (half_close) ::shutdown(fd, SHUT_WR);
  drain(fd, 1);
  ::close(fd);

  // A rank of the run, connected all along, is still served, whatever the connection above
  // did. (One client for the whole run: a new one per input would, like the raw connections,
  // leave a port in TIME_WAIT each time.)
  static baton::TcpStore& client = *[&store] {
    baton::TcpStoreOptions options;
    options.host = "127.0.0.1";
    options.port = store.port();
    options.token = kToken;
    options.timeout = std::chrono::milliseconds(5000);
    return new baton::TcpStore(options);
  }();
  const std::vector<std::uint8_t> value = {1, 2, 3};
  client.set("fuzz/check", value);
  if (client.get("fuzz/check", std::chrono::milliseconds(5000)) != value) __builtin_trap();
  const std::int64_t before = client.add("fuzz/count", 0);
  if (client.add("fuzz/count", 1) != before + 1) __builtin_trap();
  return 0;
}

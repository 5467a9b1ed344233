// The rendezvous stores: file store, baton's TCP store, prefix namespacing, the factory.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "baton/error.h"
#include "baton/stores.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

std::vector<std::uint8_t> bytes(const std::string& text) {
  return {text.begin(), text.end()};
}
std::string text(const std::vector<std::uint8_t>& value) {
  return {value.begin(), value.end()};
}

class TempFolder {
 public:
  TempFolder() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/baton-store-XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Expects `action` to throw StoreError; returns the message.
template <typename Action>
std::string store_error(Action action) {
  try {
    action();
  } catch (const StoreError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a StoreError";
  return "";
}

TEST(FileStore, SetThenGetRoundTripsAnyBytesAndKeys) {
  TempFolder folder;
  FileStore store(folder.path() + "/nested/store");
  const std::vector<std::uint8_t> binary = {0, 1, 255, 0, 10, 13};
  store.set("a/b c%d", binary);
  store.set(".lock", bytes("not the lock"));
  store.set("", bytes("empty key"));
  EXPECT_EQ(store.get("a/b c%d", milliseconds(100)), binary);
  EXPECT_EQ(text(store.get(".lock", milliseconds(100))), "not the lock");
  EXPECT_EQ(text(store.get("", milliseconds(100))), "empty key");
  store.set("a/b c%d", bytes("replaced"));
  EXPECT_EQ(text(store.get("a/b c%d", milliseconds(100))), "replaced");
  // Keys that escape to similar names stay distinct.
  store.set("x%2F", bytes("1"));
  store.set("x/", bytes("2"));
  EXPECT_EQ(text(store.get("x%2F", milliseconds(100))), "1");
  EXPECT_EQ(text(store.get("x/", milliseconds(100))), "2");
}

TEST(FileStore, GetWaitsForAKeySetLater) {
  TempFolder folder;
  FileStore reader(folder.path());
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(100));
    FileStore(folder.path()).set("late", bytes("here"));
  });
  EXPECT_EQ(text(reader.get("late", milliseconds(5000))), "here");
  writer.join();
}

TEST(FileStore, GetTimeoutNamesKeyTimeoutAndStore) {
  TempFolder folder;
  FileStore store(folder.path());
  const auto start = std::chrono::steady_clock::now();
  const std::string error = store_error([&] { store.get("rank_3/address", milliseconds(200)); });
  const auto waited = std::chrono::steady_clock::now() - start;
  // A lower bound only: the wait must not give up early. How late it returns on a loaded
  // machine is not a pass condition (the message names the timeout).
  EXPECT_GE(waited, milliseconds(200));
  EXPECT_NE(error.find("key 'rank_3/address' was not set within 0.2 s"), std::string::npos)
      << error;
  EXPECT_NE(error.find("file store " + folder.path()), std::string::npos) << error;
}

TEST(FileStore, AddIsAtomicAcrossThreadsAndInstances) {
  TempFolder folder;
  constexpr int kThreads = 4;
  constexpr int kAdds = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      FileStore store(folder.path());  // one instance each: like separate processes
      for (int i = 0; i < kAdds; ++i) store.add("counter", 1);
    });
  }
  for (auto& thread : threads) thread.join();
  FileStore store(folder.path());
  EXPECT_EQ(store.add("counter", 0), kThreads * kAdds);
  EXPECT_EQ(text(store.get("counter", milliseconds(100))), std::to_string(kThreads * kAdds));
  EXPECT_EQ(store.add("fresh", -5), -5);
}

TEST(FileStore, AddOnANonIntegerValueIsAnError) {
  TempFolder folder;
  FileStore store(folder.path());
  store.set("name", bytes("gloo"));
  const std::string error = store_error([&] { store.add("name", 1); });
  EXPECT_NE(error.find("'gloo' is not an integer"), std::string::npos) << error;
}

TEST(FileStore, UnusableFolderIsReported) {
  TempFolder folder;
  const std::string file = folder.path() + "/plain-file";
  FileStore(folder.path()).set("x", bytes("1"));
  std::filesystem::copy_file(folder.path() + "/kx", file);
  const std::string error = store_error([&] { FileStore store(file + "/sub"); });
  EXPECT_NE(error.find("cannot create file store folder"), std::string::npos) << error;
}

TEST(PrefixStore, NamespacesEveryOperation) {
  TempFolder folder;
  auto inner = std::make_shared<FileStore>(folder.path());
  PrefixStore run_a("run-a", inner);
  PrefixStore run_b("run-b", inner);
  run_a.set("rank_0", bytes("a0"));
  run_b.set("rank_0", bytes("b0"));
  EXPECT_EQ(text(run_a.get("rank_0", milliseconds(100))), "a0");
  EXPECT_EQ(text(run_b.get("rank_0", milliseconds(100))), "b0");
  EXPECT_EQ(text(inner->get("run-a/rank_0", milliseconds(100))), "a0");
  EXPECT_EQ(run_a.add("n", 2), 2);
  EXPECT_EQ(run_b.add("n", 5), 5);
  // Nested prefixes compose, and a key of one namespace is invisible in another.
  PrefixStore transport("gloo", std::make_shared<PrefixStore>("run-a", inner));
  transport.set("k", bytes("v"));
  EXPECT_EQ(text(inner->get("run-a/gloo/k", milliseconds(100))), "v");
  const std::string error = store_error([&] { run_b.get("gloo/k", milliseconds(50)); });
  EXPECT_NE(error.find("'run-b/gloo/k'"), std::string::npos) << error;
}

TEST(TcpStore, HostOnAFreePortAndServeClients) {
  TcpStoreOptions host_options;
  host_options.port = 0;
  host_options.is_server = true;
  host_options.token = "run-1";
  host_options.timeout = milliseconds(5000);
  TcpStore host(host_options);
  ASSERT_GT(host.port(), 0);

  TcpStoreOptions client_options = host_options;
  client_options.is_server = false;
  client_options.port = host.port();
  TcpStore client(client_options);
  host.set("from-host", bytes("h"));
  client.set("from-client", std::vector<std::uint8_t>{0, 1, 2});
  EXPECT_EQ(text(client.get("from-host", milliseconds(1000))), "h");
  EXPECT_EQ(host.get("from-client", milliseconds(1000)), (std::vector<std::uint8_t>{0, 1, 2}));
  EXPECT_EQ(host.add("n", 3), 3);
  EXPECT_EQ(client.add("n", 4), 7);

  std::thread late([&] {
    std::this_thread::sleep_for(milliseconds(100));
    host.set("late", bytes("ok"));
  });
  EXPECT_EQ(text(client.get("late", milliseconds(5000))), "ok");
  late.join();

  const std::string error = store_error([&] { client.get("never", milliseconds(150)); });
  EXPECT_NE(error.find("key 'never' was not set within 0.15 s (tcp store 127.0.0.1:" +
                       std::to_string(host.port()) + ")"),
            std::string::npos)
      << error;
  // The store still answers after a timed-out get.
  EXPECT_EQ(text(client.get("from-host", milliseconds(1000))), "h");
}

// A long run's per-step keys are removed once read: the store stays flat however many
// steps it serves (a key of every step made the launcher grow 5 MB -> 14 MB over 40,000).
TEST(Stores, RemoveDeletesAKeyAndFreesItsRoom) {
  TempFolder folder;
  auto file_store = std::make_shared<FileStore>(folder.path());
  TcpStoreOptions host_options;
  host_options.port = 0;
  host_options.is_server = true;
  host_options.token = "run-remove";
  host_options.timeout = milliseconds(5000);
  auto host = std::make_shared<TcpStore>(host_options);
  TcpStoreOptions client_options = host_options;
  client_options.is_server = false;
  client_options.port = host->port();
  auto client = std::make_shared<TcpStore>(client_options);
  PrefixStore prefixed("run", client);
  for (Store* store : std::vector<Store*>{file_store.get(), client.get(), &prefixed}) {
    store->set("key", bytes("value"));
    EXPECT_TRUE(store->remove("key"));
    EXPECT_FALSE(store->remove("key"));
    const std::string error = store_error([&] { store->get("key", milliseconds(50)); });
    EXPECT_NE(error.find("'"), std::string::npos) << error;
  }
  // A removed value no longer counts against the store's cap (512 MiB in all): 96 values of
  // 8 MiB (768 MiB, 1.5 times the cap), each removed once read, fit.
  const std::vector<std::uint8_t> value(8 << 20, 7);
  for (int step = 0; step < 96; ++step) {
    const std::string key = "progress/" + std::to_string(step);
    client->set(key, value);
    ASSERT_EQ(host->get(key, milliseconds(30000)).size(), value.size()) << step;
    ASSERT_TRUE(host->remove(key)) << step;
  }
}

TEST(TcpStore, UnreachableServerIsReportedWithinTheTimeout) {
  TcpStoreOptions host_options;
  host_options.port = 0;
  host_options.is_server = true;
  int unused_port = 0;
  {
    TcpStore host(host_options);  // find a port, then free it
    unused_port = host.port();
  }
  TcpStoreOptions options;
  options.port = unused_port;
  options.timeout = milliseconds(500);
  const std::string error = store_error([&] { TcpStore client(options); });
  EXPECT_NE(error.find("cannot reach the tcp store 127.0.0.1:" + std::to_string(unused_port)),
            std::string::npos)
      << error;
}

TEST(RendezvousStore, TwoRunsOnOneFolderDoNotCollide) {
  TempFolder folder;
  RendezvousOptions options;
  options.kind = "file";
  options.file = folder.path();
  options.world_size = 2;
  options.run_id = "run-1";
  auto run1 = make_rendezvous_store(options);
  options.run_id = "run-2";
  options.rank = 1;
  auto run2 = make_rendezvous_store(options);
  run1->set("rank_0", bytes("first"));
  run2->set("rank_0", bytes("second"));
  EXPECT_EQ(text(run1->get("rank_0", milliseconds(100))), "first");
  EXPECT_EQ(text(run2->get("rank_0", milliseconds(100))), "second");
  EXPECT_EQ(text(FileStore(folder.path()).get("baton/run-1/rank_0", milliseconds(100))), "first");
}

TEST(RendezvousStore, TwoRunsOnOneTcpStoreDoNotCollide) {
  TcpStoreOptions host_options;
  host_options.port = 0;
  host_options.is_server = true;
  host_options.token = "shared secret";  // both runs know it (BATON_STORE_TOKEN)
  TcpStore host(host_options);
  RendezvousOptions options;
  options.kind = "tcp";
  options.port = host.port();
  options.rank = 1;  // rank 1 connects to the store rank 0 hosts
  options.world_size = 2;
  options.timeout = milliseconds(5000);
  options.token = "shared secret";
  options.run_id = "a";
  auto run_a = make_rendezvous_store(options);
  options.run_id = "b";
  auto run_b = make_rendezvous_store(options);
  run_a->set("k", bytes("A"));
  run_b->set("k", bytes("B"));
  EXPECT_EQ(text(run_a->get("k", milliseconds(1000))), "A");
  EXPECT_EQ(text(run_b->get("k", milliseconds(1000))), "B");
  EXPECT_EQ(run_a->add("count", 1), 1);
  EXPECT_EQ(run_b->add("count", 1), 1);
}

// A raw TCP connection to 127.0.0.1:port, for bytes no baton client would send.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  void send_bytes(const std::string& data) {
    ASSERT_EQ(send(fd_, data.data(), data.size(), MSG_NOSIGNAL), static_cast<ssize_t>(data.size()));
  }
  // Everything the server sends until it closes the connection (or 5 s pass: "<open>").
  std::string read_until_closed() {
    std::string received;
    char buffer[4096];
    for (;;) {
      pollfd wait{fd_, POLLIN, 0};
      if (poll(&wait, 1, 5000) != 1) return received + "<open>";
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return received;
      received.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  bool connected_ = false;
};

std::string little_endian(std::uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

// Resident memory of this process, in MiB (the server runs in it).
// The most address space this process has ever held (VmPeak), in MiB: an allocation of
// what a peer claims shows here even if never touched, and even once freed.
long peak_virtual_mib() {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word) {
    if (word == "VmPeak:") {
      long kib = 0;
      status >> kib;
      return kib / 1024;
    }
  }
  return -1;
}

TcpStoreOptions hosting(const std::string& token) {
  TcpStoreOptions options;
  options.port = 0;
  options.is_server = true;
  options.token = token;
  options.timeout = milliseconds(5000);
  return options;
}

TEST(TcpStore, AClientOfAnotherRunIsRefused) {
  TcpStore host(hosting("run-a"));
  TcpStoreOptions other;
  other.port = host.port();
  other.token = "run-b";
  other.timeout = milliseconds(30000);  // a hang guard: refused at once
  const std::string error = store_error([&] { TcpStore client(other); });
  EXPECT_NE(error.find("this store belongs to another run"), std::string::npos) << error;
  host.set("still", bytes("served"));
  EXPECT_EQ(text(host.get("still", milliseconds(100))), "served");
}

// The nine bytes of the issue (a 0x00 and a length of 8 GiB), garbage, and lengths that claim
// gigabytes after a valid hello: each is refused and its connection closed, nothing of the
// claimed size is allocated, and the store keeps serving its run.
TEST(TcpStore, HostileBytesAreRefusedWithoutAllocatingWhatTheyClaim) {
  TcpStore host(hosting("secret"));
  const long before = peak_virtual_mib();
  {
    RawConnection nine_bytes(host.port());
    ASSERT_TRUE(nine_bytes.connected());
    nine_bytes.send_bytes(std::string(1, '\0') + little_endian(8ull << 30, 8));
    EXPECT_NE(nine_bytes.read_until_closed().find("not a baton store client"), std::string::npos);
  }
  {
    RawConnection huge_token(host.port());
    huge_token.send_bytes(std::string("batonst1") + little_endian(0xffffffffu, 4));
    EXPECT_NE(huge_token.read_until_closed().find("claims a token of 4294967295 bytes"),
              std::string::npos);
  }
  const std::string hello = std::string("batonst1") + little_endian(6, 4) + "secret";
  {
    RawConnection huge_value(host.port());
    huge_value.send_bytes(hello + std::string(1, '\1') + little_endian(1, 4) + "k" +
                          little_endian(8ull << 30, 8));
    EXPECT_NE(huge_value.read_until_closed().find("a value of 8589934592 bytes"),
              std::string::npos);
  }
  {
    RawConnection huge_key(host.port());
    huge_key.send_bytes(hello + std::string(1, '\2') + little_endian(1u << 31, 4));
    EXPECT_NE(huge_key.read_until_closed().find("a key of 2147483648 bytes"), std::string::npos);
  }
  {
    RawConnection unknown(host.port());
    unknown.send_bytes(hello + std::string(1, '\x7f') + little_endian(1, 4) + "k");
    EXPECT_NE(unknown.read_until_closed().find("unknown request 127"), std::string::npos);
  }
  // The claims are of 2 to 8 GiB; the store's own growth is a few MiB (a thread's arena
  // reservation at most 64).
  EXPECT_LT(peak_virtual_mib() - before, 512) << "the server reserved what a peer claimed";
  host.set("after", bytes("fine"));
  EXPECT_EQ(text(host.get("after", milliseconds(100))), "fine");
  EXPECT_EQ(host.add("after-count", 2), 2);
}

TEST(TcpStore, ListensOnlyOnTheAddressItWasGiven) {
  TcpStore host(hosting("t"));  // 127.0.0.1
  TcpStoreOptions elsewhere;
  elsewhere.host = "127.0.0.2";  // loopback too, but not the address bound
  elsewhere.port = host.port();
  elsewhere.token = "t";
  elsewhere.timeout = milliseconds(300);
  const std::string error = store_error([&] { TcpStore client(elsewhere); });
  EXPECT_NE(error.find("cannot reach the tcp store 127.0.0.2:"), std::string::npos) << error;
}

TEST(TcpStore, ASecondStoreOnAPortInUseIsRefusedNamingIt) {
  TcpStore first(hosting("one"));
  TcpStoreOptions second = hosting("two");
  second.port = first.port();
  const std::string error = store_error([&] { TcpStore again(second); });
  EXPECT_NE(error.find("cannot host the tcp store at 127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("another run, or another store, uses this port"), std::string::npos)
      << error;
}

TEST(TcpStore, ASilentConnectionDoesNotStallTheRun) {
  TcpStore host(hosting("x"));
  RawConnection silent(host.port());  // connects, never says hello
  ASSERT_TRUE(silent.connected());
  TcpStoreOptions client_options;
  client_options.port = host.port();
  client_options.token = "x";
  // Hang guards: a stalled store fails the test at 30 s, a working one answers at once.
  client_options.timeout = milliseconds(30000);
  TcpStore client(client_options);
  client.set("k", bytes("v"));
  EXPECT_EQ(text(host.get("k", milliseconds(30000))), "v");
}

// A stray process with the run's environment (the issue: a third `baton run` with RANK=1
// hung silently in gloo's connect) is refused at once, naming the rank.
TEST(RendezvousStore, ASecondProcessClaimingARankIsRefused) {
  TcpStore host(hosting("token"));
  RendezvousOptions options;
  options.kind = "tcp";
  options.port = host.port();
  options.rank = 1;
  options.world_size = 2;
  options.timeout = milliseconds(30000);  // a hang guard: the second claim is refused at once
  options.token = "token";
  options.run_id = "r";
  auto first = make_rendezvous_store(options);
  const std::string error = store_error([&] { make_rendezvous_store(options); });
  EXPECT_NE(error.find("rank 1 of run 'r' is already taken by another process"), std::string::npos)
      << error;
  options.rank = 0;
  options.rank0_hosts = false;                         // the test's store is the host
  EXPECT_NE(make_rendezvous_store(options), nullptr);  // other ranks are unaffected
}

TEST(RendezvousStore, RejectsBadOptionsWithReasons) {
  RendezvousOptions options;
  options.run_id = "";
  try {
    make_rendezvous_store(options);
    ADD_FAILURE() << "an empty run id was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("run id is empty"), std::string::npos);
  }
  options.run_id = "r";
  options.kind = "etcd";
  try {
    make_rendezvous_store(options);
    ADD_FAILURE() << "an unknown kind was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("unknown store kind 'etcd'"), std::string::npos);
  }
  options.kind = "file";
  try {
    make_rendezvous_store(options);
    ADD_FAILURE() << "a file store without a folder was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("needs the store's folder"), std::string::npos);
  }
  options.rank = 2;
  options.world_size = 2;
  try {
    make_rendezvous_store(options);
    ADD_FAILURE() << "rank 2 of 2 was accepted";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("rank 2 is outside a world of 2"), std::string::npos);
  }
}

}  // namespace
}  // namespace baton

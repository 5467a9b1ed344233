// The UCX transport beyond the conformance suite: every test runs once per local UCX
// transport (UCX_TLS unset, =shm, =tcp), with two or three ranks inside this process. What
// needs separate processes (a peer killed with SIGKILL) is in tests/transport's suite.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <thread>

#include "baton/error.h"
#include "baton/stores.h"
#include "baton/transport_support.h"
#include "thread_cpu.h"
#include "transport_group.h"

namespace baton_test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kWait{60000};  // for waits that must succeed: a hang guard

at::Tensor random_bytes(std::size_t bytes, std::uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  return at::randint(0, 256, {static_cast<std::int64_t>(bytes)}, generator, at::kByte);
}

at::Tensor empty_bytes(std::size_t bytes) {
  return at::empty({static_cast<std::int64_t>(bytes)}, at::kByte);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const baton::TransportError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a TransportError";
  return "";
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class UcxTransportTest : public ::testing::TestWithParam<std::string> {
 protected:
  // UCX reads UCX_TLS when a transport creates its worker.
  UcxTransportTest()
      : tls_("UCX_TLS",
             GetParam() == "default" ? std::nullopt : std::optional<std::string>(GetParam())),
        plugin_(baton::PluginLoader().load(baton::PluginKind::kTransport, "ucx")) {}

  std::unique_ptr<TransportGroup> connect(int world_size = 2,
                                          const std::map<std::string, std::string>& params = {}) {
    return connect_group("ucx", world_size, params, kWait);
  }

  ScopedEnvironment tls_;
  // Keeps the plugin loaded until the test's exceptions (thrown by plugin code) are gone.
  std::shared_ptr<baton::LoadedPlugin> plugin_;
};

TEST_P(UcxTransportTest, SizesFromZeroTo64MiBArriveIntactBothWays) {
  auto group = connect();
  const std::vector<std::size_t> sizes = {0, 1, 7, 4096, 65539, 1 << 20, 64 << 20};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    SCOPED_TRACE("size " + std::to_string(sizes[i]));
    const at::Tensor to_one = random_bytes(sizes[i], 2 * i);
    const at::Tensor to_zero = random_bytes(sizes[i], 2 * i + 1);
    at::Tensor at_one = empty_bytes(sizes[i]);
    at::Tensor at_zero = empty_bytes(sizes[i]);
    auto recv_one = (*group)[1].irecv(at_one, 0, i);
    auto recv_zero = (*group)[0].irecv(at_zero, 1, i);
    auto send_one = (*group)[0].isend(to_one, 1, i);
    auto send_zero = (*group)[1].isend(to_zero, 0, i);
    for (auto* work : {send_one.get(), send_zero.get(), recv_one.get(), recv_zero.get()}) {
      work->wait(kWait);
    }
    EXPECT_TRUE(at::equal(at_one, to_one));
    EXPECT_TRUE(at::equal(at_zero, to_zero));
  }
}

TEST_P(UcxTransportTest, OutOfOrderTagsMatchTheirOwnReceives) {
  auto group = connect();
  std::vector<at::Tensor> sent;
  std::vector<std::unique_ptr<baton::Work>> sends;
  for (int tag = 1; tag <= 8; ++tag) {
    sent.push_back(random_bytes(static_cast<std::size_t>(tag) * 1000, tag));
    sends.push_back((*group)[1].isend(sent.back(), 0, tag));
  }
  for (int tag = 8; tag >= 1; --tag) {
    at::Tensor received = empty_bytes(static_cast<std::size_t>(tag) * 1000);
    (*group)[0].irecv(received, 1, tag)->wait(kWait);
    EXPECT_TRUE(at::equal(received, sent[tag - 1])) << "tag " << tag;
  }
  for (auto& work : sends) work->wait(kWait);
}

TEST_P(UcxTransportTest, SameTagMessagesArriveInSendOrderAcrossProtocols) {
  auto group = connect();
  // Small (eager) and large (rendezvous) messages interleaved on one tag; half the
  // receives are posted before their sends, half after.
  constexpr int kMessages = 40;
  std::vector<at::Tensor> sent;
  std::vector<at::Tensor> received;
  std::vector<std::unique_ptr<baton::Work>> works;
  for (int i = 0; i < kMessages; ++i) {
    const std::size_t bytes = i % 3 == 0 ? 300000 : 64;
    sent.push_back(random_bytes(bytes, 100 + i));
    received.push_back(empty_bytes(bytes));
  }
  for (int i = 0; i < kMessages / 2; ++i) works.push_back((*group)[0].irecv(received[i], 1, 5));
  for (int i = 0; i < kMessages; ++i) works.push_back((*group)[1].isend(sent[i], 0, 5));
  for (int i = kMessages / 2; i < kMessages; ++i) {
    works.push_back((*group)[0].irecv(received[i], 1, 5));
  }
  for (auto& work : works) work->wait(kWait);
  for (int i = 0; i < kMessages; ++i) EXPECT_TRUE(at::equal(received[i], sent[i])) << i;
}

TEST_P(UcxTransportTest, SameTagFromTwoSendersLandsWithTheRightSender) {
  auto group = connect(3);
  const at::Tensor from_one = random_bytes(512, 1);
  const at::Tensor from_two = random_bytes(512, 2);
  auto send_one = (*group)[1].isend(from_one, 0, 9);
  auto send_two = (*group)[2].isend(from_two, 0, 9);
  // Both messages are waiting at rank 0 (sends complete only once received).
  std::this_thread::sleep_for(milliseconds(100));
  at::Tensor first = empty_bytes(512);
  at::Tensor second = empty_bytes(512);
  (*group)[0].irecv(first, 2, 9)->wait(kWait);
  (*group)[0].irecv(second, 1, 9)->wait(kWait);
  send_one->wait(kWait);
  send_two->wait(kWait);
  EXPECT_TRUE(at::equal(first, from_two));
  EXPECT_TRUE(at::equal(second, from_one));
}

TEST_P(UcxTransportTest, TimeoutNamesPeerTagAndBytesAndAbortsTheTransport) {
  auto group = connect();
  auto work = (*group)[0].irecv(empty_bytes(4096), 1, 0x77);
  auto other = (*group)[0].irecv(empty_bytes(16), 1, 0x78);
  const std::string error = error_of([&] { work->wait(milliseconds(300)); });
  EXPECT_EQ(error, "rank 0: recv from rank 1 (tag 0x77, 4096 bytes) timed out after 0.3 s");
  // The transport is aborted with the timeout as the reason: what was pending fails, and so
  // does what is posted later.
  const std::string pending = error_of([&] { other->wait(kWait); });
  EXPECT_NE(pending.find("aborted: " + error), std::string::npos) << pending;
  const std::string later = error_of([&] { (*group)[0].isend(empty_bytes(8), 1, 0x79); });
  EXPECT_NE(later.find("aborted: " + error), std::string::npos) << later;
}

TEST_P(UcxTransportTest, WrongSizeReceivesNameBothSizes) {
  auto group = connect();
  struct Case {
    std::size_t sent;
    std::size_t expected;
  };
  // Eager and rendezvous sizes, too large and too small.
  const std::vector<Case> cases = {{100, 50}, {50, 100}, {1 << 20, 1 << 19}, {1 << 19, 1 << 20}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    auto send = (*group)[1].isend(random_bytes(c.sent, i), 0, 3);
    const std::string error =
        error_of([&] { (*group)[0].irecv(empty_bytes(c.expected), 1, 3)->wait(kWait); });
    EXPECT_NE(
        error.find("rank 0: recv from rank 1 (tag 0x3, " + std::to_string(c.expected) + " bytes)"),
        std::string::npos)
        << error;
    EXPECT_NE(
        error.find("size mismatch: rank 1 sent " + std::to_string(c.sent) +
                   " bytes, the receive tensor holds " + std::to_string(c.expected) + " bytes"),
        std::string::npos)
        << error;
    send->wait(kWait);
  }
  // The rejected messages are gone; the next one on the tag arrives where it belongs.
  const at::Tensor sent = random_bytes(64, 99);
  auto send = (*group)[1].isend(sent, 0, 3);
  at::Tensor received = empty_bytes(64);
  (*group)[0].irecv(received, 1, 3)->wait(kWait);
  send->wait(kWait);
  EXPECT_TRUE(at::equal(received, sent));
}

TEST_P(UcxTransportTest, AbortFailsPendingAndFutureOperationsFast) {
  auto group = connect();
  auto pending = (*group)[0].irecv(empty_bytes(1 << 20), 1, 1);
  auto peer_pending = (*group)[1].irecv(empty_bytes(16), 0, 1);
  std::thread aborter([&] {
    std::this_thread::sleep_for(milliseconds(100));
    (*group)[0].abort("test abort");
  });
  // kWait (20 s) is only a hang guard: the error text shows the abort ended the wait.
  std::string error = error_of([&] { pending->wait(kWait); });
  aborter.join();
  EXPECT_EQ(error,
            "rank 0: recv from rank 1 (tag 0x1, 1048576 bytes): the transport was aborted: "
            "test abort");
  error = error_of([&] { (*group)[0].isend(empty_bytes(8), 1, 2); });
  EXPECT_NE(error.find("send to rank 1 (tag 0x2, 8 bytes): the transport was aborted: test abort"),
            std::string::npos)
      << error;
  error = error_of([&] { (*group)[0].irecv(empty_bytes(8), 1, 2); });
  EXPECT_NE(error.find("the transport was aborted: test abort"), std::string::npos) << error;
  // The peer hears of it (an abort notice) and fails at once, not at its timeout.
  error = error_of([&] { peer_pending->wait(kWait); });
  EXPECT_EQ(error,
            "rank 1: recv from rank 0 (tag 0x1, 16 bytes) failed: peer rank 0 closed the "
            "connection: it aborted (test abort)");
}

TEST_P(UcxTransportTest, PeerThatShutsDownFailsPendingReceivesAtOnce) {
  auto group = connect();
  auto pending = (*group)[0].irecv(empty_bytes(64), 1, 4);
  group->ranks[1].reset();  // its shutdown notice reaches rank 0, over shared memory too
  const std::string error = error_of([&] { pending->wait(kWait); });
  EXPECT_EQ(error,
            "rank 0: recv from rank 1 (tag 0x4, 64 bytes) failed: peer rank 1 closed the "
            "connection: it shut down its transport");
  // Later operations with that peer fail at once.
  const std::string later = error_of([&] { (*group)[0].isend(empty_bytes(8), 1, 4); });
  EXPECT_NE(later.find("peer rank 1"), std::string::npos) << later;
}

TEST_P(UcxTransportTest, LargeTransfersCompleteWhileNobodyWaits) {
  // The ranks "compute" (never call wait); only the progress threads move the rendezvous.
  auto group = connect();
  const at::Tensor sent = random_bytes(32 << 20, 5);
  at::Tensor received = empty_bytes(32 << 20);
  auto recv = (*group)[1].irecv(received, 0, 6);
  auto send = (*group)[0].isend(sent, 1, 6);
  // A hang guard only (the transfer takes milliseconds): nobody waits, so without the
  // progress threads it would never complete.
  const auto start = Clock::now();
  while (!(recv->test() && send->test()) && seconds_since(start) < 90.0) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(recv->test() && send->test()) << "not complete after 90 s without a waiter";
  EXPECT_TRUE(at::equal(received, sent));
}

TEST_P(UcxTransportTest, DroppedWorkKeepsTheSentTensorAlive) {
  auto group = connect();
  const at::Tensor expected = random_bytes(4 << 20, 8);
  (*group)[0].isend(expected.clone(), 1, 7);  // Work and tensor dropped at once
  at::Tensor received = empty_bytes(4 << 20);
  (*group)[1].irecv(received, 0, 7)->wait(kWait);
  EXPECT_TRUE(at::equal(received, expected));
}

TEST_P(UcxTransportTest, ConcurrentPostsFromSeveralThreads) {
  auto group = connect();
  constexpr int kThreads = 4;
  constexpr int kMessages = 50;
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&, t] {
      for (int i = 0; i < kMessages; ++i) {
        at::Tensor value = at::full({16}, t * 1000 + i, at::kLong);
        (*group)[0].isend(value, 1, static_cast<std::uint64_t>(t))->wait(kWait);
      }
    });
  }
  std::vector<std::thread> receivers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    receivers.emplace_back([&, t] {
      for (int i = 0; i < kMessages; ++i) {
        at::Tensor value = at::empty({16}, at::kLong);
        (*group)[1].irecv(value, 0, static_cast<std::uint64_t>(t))->wait(kWait);
        if (!at::equal(value, at::full({16}, t * 1000 + i, at::kLong))) ++wrong;
      }
    });
  }
  for (auto& thread : senders) thread.join();
  for (auto& thread : receivers) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(UcxTransportTest, PingPongWithoutPollingLosesNoWakeUp) {
  // progress_poll_us = 0 and wait_poll_us = 0: the progress threads sleep whenever nothing
  // moves and waiting callers never poll, so every message goes through an armed wake-up.
  // A lost wake-up shows as a timeout.
  auto group = connect(2, {{"progress_poll_us", "0"}, {"wait_poll_us", "0"}});
  at::Tensor ball = at::zeros({2}, at::kLong);
  constexpr int kRounds = 300;
  for (int i = 0; i < kRounds; ++i) {
    auto recv = (*group)[1].irecv(ball, 0, 1);
    (*group)[0].isend(at::full({2}, i, at::kLong), 1, 1)->wait(kWait);
    recv->wait(kWait);
    auto back = (*group)[0].irecv(ball, 1, 2);
    (*group)[1].isend(ball.clone(), 0, 2)->wait(kWait);
    back->wait(kWait);
    ASSERT_EQ(ball[0].item<std::int64_t>(), i);
  }
}

TEST_P(UcxTransportTest, WaitingCallersPollWhileTheProgressThreadStandsAside) {
  // Only the callers' polling moves these messages quickly; the progress thread resumes
  // (and sleeps) between waits. Both paths must hand over without losing a completion.
  auto group = connect(2, {{"progress_poll_us", "0"}, {"wait_poll_us", "100000"}});
  at::Tensor ball = at::zeros({256}, at::kLong);
  for (int i = 0; i < 300; ++i) {
    auto recv = (*group)[1].irecv(ball, 0, 1);
    auto send = (*group)[0].isend(at::full({256}, i, at::kLong), 1, 1);
    recv->wait(kWait);
    send->wait(kWait);
    ASSERT_EQ(ball[255].item<std::int64_t>(), i);
  }
  // A wait whose operation never completes polls for its budget, then sleeps until its
  // timeout and names it.
  auto never = (*group)[0].irecv(at::empty({4}, at::kByte), 1, 99);
  const std::string error = error_of([&] { never->wait(milliseconds(300)); });
  EXPECT_NE(error.find("timed out after 0.3 s"), std::string::npos) << error;
}

// What idle progress threads cost in CPU is a figure, not a pass condition: the benchmark
// baton-ucx-idle-bench reports it. Here: one named progress thread per rank, no more.
TEST_P(UcxTransportTest, EveryRankRunsOneNamedProgressThread) {
  auto group = connect();
  auto recv = (*group)[1].irecv(at::empty({1024}, at::kFloat), 0, 1);
  (*group)[0].isend(at::ones({1024}, at::kFloat), 1, 1)->wait(kWait);
  recv->wait(kWait);
  int threads = 0;
  thread_cpu_time("baton-ucx", &threads);
  EXPECT_EQ(threads, 2);
}

TEST_P(UcxTransportTest, RejectsTagsBeyondItsFortyBits) {
  auto group = connect();
  const std::string error =
      error_of([&] { (*group)[0].isend(empty_bytes(8), 1, std::uint64_t{1} << 40); });
  EXPECT_NE(error.find("rank 0: send to rank 1 (tag 0x10000000000, 8 bytes): tag 0x10000000000 "
                       "is too large; the UCX transport carries tags up to 0xfffffffffe"),
            std::string::npos)
      << error;
  // The largest tag works (the one above is the transport's own).
  const std::uint64_t largest = (std::uint64_t{1} << 40) - 2;
  auto recv = (*group)[1].irecv(empty_bytes(8), 0, largest);
  (*group)[0].isend(empty_bytes(8), 1, largest)->wait(kWait);
  recv->wait(kWait);
}

INSTANTIATE_TEST_SUITE_P(Tls, UcxTransportTest, ::testing::Values("default", "shm", "tcp"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(UcxPlugin, DeclaresItsParametersAndIsViableHere) {
  auto plugin = baton::PluginLoader().load(baton::PluginKind::kTransport, "ucx");
  EXPECT_EQ(plugin->name(), "ucx");
  const baton::Viability viability = plugin->viability();
  EXPECT_TRUE(viability.viable) << viability.reason;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < plugin->descriptor().num_params; ++i) {
    names.push_back(plugin->descriptor().params[i].name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"timeout_s", "progress_poll_us", "wait_poll_us",
                                             "net_devices", "peer_failure_detection"}));
}

TEST(UcxPlugin, RejectsBadParameters) {
  auto plugin = baton::PluginLoader().load(baton::PluginKind::kTransport, "ucx");
  try {
    plugin->create(plugin_params(*plugin, {{"progress_poll_us", "-1"}}));
    ADD_FAILURE() << "progress_poll_us = -1 was accepted";
  } catch (const baton::Error& error) {
    EXPECT_NE(std::string(error.what()).find("progress_poll_us must be between 0 and"),
              std::string::npos)
        << error.what();
  }
  for (const char* text : {"soon", "1e3", "10000001"}) {
    try {
      plugin->create(plugin_params(*plugin, {{"progress_poll_us", text}}));
      ADD_FAILURE() << "progress_poll_us = " << text << " was accepted";
    } catch (const baton::Error& error) {
      EXPECT_NE(std::string(error.what())
                    .find("progress_poll_us must be between 0 and 10000000 "
                          "(10 s) or auto, got " +
                          std::string(text)),
                std::string::npos)
          << error.what();
    }
  }
  try {
    plugin->create(plugin_params(*plugin, {{"wait_poll_us", "-5"}}));
    ADD_FAILURE() << "wait_poll_us = -5 was accepted";
  } catch (const baton::Error& error) {
    EXPECT_NE(std::string(error.what()).find("wait_poll_us must be between 0 and"),
              std::string::npos)
        << error.what();
  }
  try {
    plugin->create(plugin_params(*plugin, {{"timeout_s", "-2"}}));
    ADD_FAILURE() << "timeout_s = -2 was accepted";
  } catch (const baton::Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("transport.params.timeout_s must be a number of seconds from 0 to 604800 "
                        "(a week), got -2"),
              std::string::npos)
        << error.what();
  }
}

TEST(UcxPlugin, RefusesTransfersBeforeConnect) {
  auto plugin = baton::PluginLoader().load(baton::PluginKind::kTransport, "ucx");
  auto transport = plugin->create_as<baton::Transport>(plugin_params(*plugin));
  const std::string error = error_of([&] { transport->isend(empty_bytes(4), 1, 0); });
  EXPECT_EQ(error, "ucx: isend() before connect()");
}

TEST(UcxPlugin, ConnectWithoutThePeerTimesOutNamingIt) {
  auto plugin = baton::PluginLoader().load(baton::PluginKind::kTransport, "ucx");
  auto transport = plugin->create_as<baton::Transport>(plugin_params(*plugin));
  char folder[] = "/tmp/baton-ucx-connect-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  baton::TransportContext context;
  context.rank = 0;
  context.world_size = 2;
  context.store = std::make_shared<baton::FileStore>(folder);
  context.timeout = milliseconds(500);
  const std::string error = error_of([&] { transport->connect(context); });
  EXPECT_NE(error.find("rank 0: ucx: connecting to rank 1 failed: "), std::string::npos) << error;
  EXPECT_NE(error.find("0.5 s"), std::string::npos) << error;
  transport.reset();
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace baton_test

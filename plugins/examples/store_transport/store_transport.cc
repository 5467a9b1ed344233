// An example third-party transport: every message goes through the run's key-value store
// (the TCP store the ranks met at). Slow — two store round trips a message — but complete:
// it passes the transport conformance suite (any CPU dtype, sizes to 64 MiB, ordered per
// (peer, tag), sizes checked, every wait bounded, abort prompt, a dead peer found within
// seconds). It shows the whole contract of docs/writing-a-transport.md in one file, built
// against the installed SDK only (CMakeLists.txt here). It implements version 1 of the
// transport interface (BATON_PLUGIN lists nothing else), which every core runs.
//
// A message from rank s to rank r with tag t is the store key "m/<s>/<r>/<t>/<n>", n counting
// the messages of (s, r, t): the receiver reads its n-th key, so messages of one (peer, tag)
// arrive in send order, and removes it once copied. The key holds the message's size (8
// bytes) and its first part; a message larger than one store value continues in parts
// "<key>/1", "<key>/2", …, written before the key itself so that they are there when it is.
//
// Peers: each rank counts a heartbeat in "alive/<rank>" and, when its transport is aborted
// or destroyed, leaves its reason in "closed/<rank>"; a receive waiting on a peer that closed,
// or whose heartbeat stopped, fails at once naming the peer.
#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "baton/error.h"
#include "baton/plugin.h"
#include "baton/store.h"
#include "baton/transfer_outcome.h"
#include "baton/transport.h"
#include "baton/transport_support.h"

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// How long one look at the store for a message lasts: an abort is noticed within it.
constexpr milliseconds kSlice{50};
// A store value holds at most 16 MiB; messages travel in parts of 8 MiB.
constexpr std::size_t kPartBytes = std::size_t{8} << 20;
// Heartbeats: one every kBeat; a peer whose count has not moved for kSilence is gone.
constexpr milliseconds kBeat{200};
constexpr milliseconds kSilence{5000};
constexpr std::size_t kSizeBytes = sizeof(std::uint64_t);

std::string alive_key(int rank) {
  return "alive/" + std::to_string(rank);
}
std::string closed_key(int rank) {
  return "closed/" + std::to_string(rank);
}

// What every Work and the transport share: the store, whether (and why) it was aborted, and
// what is known of each peer.
struct Shared {
  std::shared_ptr<baton::Store> store;
  std::mutex mutex;
  std::string aborted;  // the reason; empty while usable
  struct Peer {
    std::int64_t beats = -1;
    Clock::time_point moved = Clock::now();
    Clock::time_point looked{};
    std::string gone;  // why the peer is gone; empty while it is there
  };
  std::map<int, Peer> peers;

  // Why `peer` is gone ("peer rank 1 closed the connection (…)"), or empty: looks at the store
  // at most every kBeat.
  std::string peer_gone(int peer) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      Peer& known = peers[peer];
      if (!known.gone.empty() || Clock::now() - known.looked < kBeat) return known.gone;
      known.looked = Clock::now();
    }
    std::string gone;
    try {
      const std::vector<std::uint8_t> why = store->get(closed_key(peer), milliseconds(0));
      gone = "peer rank " + std::to_string(peer) + " closed the connection (" +
             std::string(why.begin(), why.end()) + ")";
    } catch (const baton::StoreError&) {
      const std::int64_t beats = store->add(alive_key(peer), 0);
      std::lock_guard<std::mutex> lock(mutex);
      Peer& known = peers[peer];
      if (beats != known.beats) {
        known.beats = beats;
        known.moved = Clock::now();
      } else if (Clock::now() - known.moved > kSilence) {
        gone = "peer rank " + std::to_string(peer) + " closed the connection (no heartbeat for " +
               std::to_string(kSilence.count() / 1000) + " s: it exited or was killed)";
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (!gone.empty()) peers[peer].gone = gone;
    return peers[peer].gone;
  }
};

class StoreWork final : public baton::Work {
 public:
  // A send is done when posted (the store holds it); a receive reads `key` on wait().
  StoreWork(std::shared_ptr<Shared> shared, std::shared_ptr<baton::TransferOutcome> outcome,
            at::Tensor tensor, int peer, std::string key,
            std::shared_ptr<baton::TransportAbortHandle> abort)
      : shared_(std::move(shared)),
        outcome_(std::move(outcome)),
        tensor_(std::move(tensor)),
        peer_(peer),
        key_(std::move(key)),
        abort_(std::move(abort)) {}

  void wait(milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    while (!look(kSlice)) {
      if (Clock::now() >= deadline) {
        abort_->abort_on_timeout(outcome_->timeout_message(timeout));
      }
    }
  }

  bool test() override { return look(milliseconds(1)); }

 private:
  // True once settled (throws if it failed); otherwise looks for the message for `slice`.
  bool look(milliseconds slice) {
    if (outcome_->settled() || key_.empty()) return outcome_->test();
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      if (!shared_->aborted.empty()) {
        outcome_->fail(outcome_->name() +
                       " failed: the transport was aborted: " + shared_->aborted);
      }
    }
    if (outcome_->settled()) return outcome_->test();
    std::vector<std::uint8_t> head;
    try {
      head = shared_->store->get(key_, slice);
    } catch (const baton::StoreError&) {
      // Not there yet: what was sent before the peer went is still read above.
      const std::string gone = shared_->peer_gone(peer_);
      if (!gone.empty()) outcome_->fail(outcome_->name() + " failed: " + gone);
      return outcome_->test();
    }
    receive(head);
    return outcome_->test();
  }

  void receive(const std::vector<std::uint8_t>& head) {
    std::uint64_t sent = 0;
    if (head.size() >= kSizeBytes) std::memcpy(&sent, head.data(), kSizeBytes);
    const std::size_t parts = sent <= kPartBytes ? 0 : (sent - 1) / kPartBytes;
    const std::size_t expected = baton::tensor_bytes(tensor_);
    if (sent != expected) {
      outcome_->fail(outcome_->name() + " failed: the message holds " + std::to_string(sent) +
                     " bytes, the receive expects " + std::to_string(expected) + " bytes");
    } else {
      // Each part holds exactly its share of the message: copied only then, so that a
      // damaged store value can never write past the receive's tensor.
      auto* out = static_cast<std::uint8_t*>(tensor_.data_ptr());
      const std::size_t first = std::min<std::size_t>(sent, kPartBytes);
      bool whole = head.size() == kSizeBytes + first;
      if (whole) std::memcpy(out, head.data() + kSizeBytes, first);
      for (std::size_t part = 1; whole && part <= parts; ++part) {
        const std::vector<std::uint8_t> bytes =
            shared_->store->get(key_ + "/" + std::to_string(part), milliseconds(0));
        whole = bytes.size() == std::min<std::size_t>(sent - part * kPartBytes, kPartBytes);
        if (whole) std::memcpy(out + part * kPartBytes, bytes.data(), bytes.size());
      }
      if (whole) {
        outcome_->succeed();
      } else {
        outcome_->fail(outcome_->name() + " failed: the message's parts in the store do not " +
                       "add up to the " + std::to_string(sent) + " bytes it announced");
      }
    }
    for (std::size_t part = 1; part <= parts; ++part) {
      shared_->store->remove(key_ + "/" + std::to_string(part));
    }
    shared_->store->remove(key_);
  }

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<baton::TransferOutcome> outcome_;
  at::Tensor tensor_;
  int peer_ = 0;
  std::string key_;  // empty for a send
  std::shared_ptr<baton::TransportAbortHandle> abort_;
};

class StoreTransport final : public baton::Transport {
 public:
  StoreTransport()
      : shared_(std::make_shared<Shared>()),
        abort_handle_(std::make_shared<baton::TransportAbortHandle>(this)) {}

  ~StoreTransport() override {
    abort_handle_->detach();
    close("rank " + std::to_string(rank_) + " left");
  }

  void connect(const baton::TransportContext& ctx) override {
    rank_ = ctx.rank;
    world_size_ = ctx.world_size;
    shared_->store = ctx.store;
    heartbeat_ = std::thread([this] { beat(); });
    // Every peer says it is here: a peer that never comes is named within the timeout.
    ctx.store->set("here/" + std::to_string(rank_), {1});
    for (int peer = 0; peer < world_size_; ++peer) {
      if (peer == rank_) continue;
      try {
        ctx.store->get("here/" + std::to_string(peer), ctx.timeout);
      } catch (const baton::StoreError& error) {
        throw baton::TransportError(baton::rank_prefix(rank_) + "rank " + std::to_string(peer) +
                                    " never connected to the store transport: " + error.what());
      }
    }
  }

  std::unique_ptr<baton::Work> isend(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override {
    auto outcome = start(tensor, peer, tag, baton::P2PDirection::kSend);
    const std::string gone = shared_->peer_gone(peer);
    if (!gone.empty()) {
      outcome->fail(outcome->name() + " failed: " + gone);
    } else {
      try {
        send(tensor, key(rank_, peer, tag, next(sent_, peer, tag)));
        outcome->succeed();
      } catch (const baton::Error& error) {
        outcome->fail(outcome->name() + " failed: " + error.what());
      }
    }
    return std::make_unique<StoreWork>(shared_, outcome, tensor, peer, "", abort_handle_);
  }

  std::unique_ptr<baton::Work> irecv(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override {
    auto outcome = start(tensor, peer, tag, baton::P2PDirection::kRecv);
    return std::make_unique<StoreWork>(shared_, outcome, tensor, peer,
                                       key(peer, rank_, tag, next(received_, peer, tag)),
                                       abort_handle_);
  }

  void abort(const std::string& reason) override {
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      if (shared_->aborted.empty()) shared_->aborted = reason.empty() ? "aborted" : reason;
    }
    close("its transport was aborted: " + (reason.empty() ? std::string("aborted") : reason));
  }

 private:
  using Counters = std::map<std::pair<int, std::uint64_t>, std::uint64_t>;

  static std::string key(int from, int to, std::uint64_t tag, std::uint64_t n) {
    return "m/" + std::to_string(from) + "/" + std::to_string(to) + "/" + std::to_string(tag) +
           "/" + std::to_string(n);
  }

  // The parts after the first, then the key with the size and the first part.
  void send(const at::Tensor& tensor, const std::string& message_key) {
    const std::uint64_t bytes = baton::tensor_bytes(tensor);
    const auto* data = static_cast<const std::uint8_t*>(tensor.data_ptr());
    for (std::size_t part = 1; part * kPartBytes < bytes; ++part) {
      const std::size_t begin = part * kPartBytes;
      const std::size_t end = std::min<std::size_t>(bytes, begin + kPartBytes);
      shared_->store->set(message_key + "/" + std::to_string(part),
                          std::vector<std::uint8_t>(data + begin, data + end));
    }
    std::vector<std::uint8_t> head(kSizeBytes + std::min<std::size_t>(bytes, kPartBytes));
    std::memcpy(head.data(), &bytes, kSizeBytes);
    std::memcpy(head.data() + kSizeBytes, data, head.size() - kSizeBytes);
    shared_->store->set(message_key, head);
  }

  void beat() {
    std::unique_lock<std::mutex> lock(beat_mutex_);
    while (!closing_) {
      lock.unlock();
      try {
        shared_->store->add(alive_key(rank_), 1);
      } catch (const baton::Error&) {
        // The store went away (the run is ending): the peers' waits say so themselves.
      }
      lock.lock();
      beat_wakeup_.wait_for(lock, kBeat, [this] { return closing_; });
    }
  }

  // Stops the heartbeat and tells the peers why, once.
  void close(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(beat_mutex_);
      if (closing_) return;
      closing_ = true;
    }
    beat_wakeup_.notify_all();
    if (heartbeat_.joinable()) heartbeat_.join();
    if (!shared_->store) return;
    try {
      shared_->store->set(closed_key(rank_), std::vector<std::uint8_t>(why.begin(), why.end()));
    } catch (const baton::Error&) {
    }
  }

  std::uint64_t next(Counters& counters, int peer, std::uint64_t tag) {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return counters[{peer, tag}]++;
  }

  // Checks the arguments and that the transport is usable; the operation's outcome.
  std::shared_ptr<baton::TransferOutcome> start(const at::Tensor& tensor, int peer,
                                                std::uint64_t tag, baton::P2PDirection direction) {
    baton::check_p2p_arguments(tensor, rank_, world_size_, peer, direction);
    auto outcome = std::make_shared<baton::TransferOutcome>(
        rank_, baton::P2PDescription{direction, peer, tag, baton::tensor_bytes(tensor)});
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (!shared_->aborted.empty()) {
      throw baton::TransportError(outcome->name() +
                                  " refused: the transport was aborted: " + shared_->aborted);
    }
    return outcome;
  }

  int rank_ = 0;
  int world_size_ = 1;
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<baton::TransportAbortHandle> abort_handle_;
  Counters sent_, received_;
  std::thread heartbeat_;
  std::mutex beat_mutex_;
  std::condition_variable beat_wakeup_;
  bool closing_ = false;
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<StoreTransport>();
}

}  // namespace

// No parameters; it can run wherever the ranks share a store, so no viability check.
BATON_PLUGIN(baton::PluginKind::kTransport, "store", "1.0.0",
             "every message through the run's key-value store (example plugin built against "
             "the SDK: slow, complete)",
             nullptr, nullptr, &create)

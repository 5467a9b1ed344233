// An example third-party transport: every message goes through the run's key-value store
// (the TCP store the ranks met at). Slow — two store round trips a message — but complete:
// any CPU dtype, ordered per (peer, tag), sizes checked, every wait bounded, abort prompt.
// It shows the whole contract of docs/writing-a-transport.md in one file, built against the
// installed SDK only (CMakeLists.txt here).
//
// A message from rank s to rank r with tag t is the store key "m/<s>/<r>/<t>/<n>", n counting
// the messages of (s, r, t): the receiver reads its n-th key, so messages of one (peer, tag)
// arrive in send order, and removes it once copied.
#include <ATen/ATen.h>

#include <atomic>
#include <chrono>
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

// What every Work and the transport share: the store, and whether (and why) it was aborted.
struct Shared {
  std::shared_ptr<baton::Store> store;
  std::mutex mutex;
  std::string aborted;  // the reason; empty while usable
};

// How long one look at the store for a message lasts: an abort is noticed within it.
constexpr milliseconds kSlice{50};

class StoreWork final : public baton::Work {
 public:
  // A send is done when posted (the store holds it); a receive reads `key` on wait().
  StoreWork(std::shared_ptr<Shared> shared, std::shared_ptr<baton::TransferOutcome> outcome,
            at::Tensor tensor, std::string key, std::shared_ptr<baton::TransportAbortHandle> abort)
      : shared_(std::move(shared)),
        outcome_(std::move(outcome)),
        tensor_(std::move(tensor)),
        key_(std::move(key)),
        abort_(std::move(abort)) {}

  void wait(milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!look(kSlice)) {
      if (std::chrono::steady_clock::now() >= deadline) {
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
      if (!shared_->aborted.empty())
        outcome_->fail(outcome_->name() + " failed: " + shared_->aborted);
    }
    if (outcome_->settled()) return outcome_->test();
    std::vector<std::uint8_t> bytes;
    try {
      bytes = shared_->store->get(key_, slice);
    } catch (const baton::StoreError&) {
      return false;  // not there yet
    }
    const std::size_t expected = baton::tensor_bytes(tensor_);
    if (bytes.size() != expected) {
      outcome_->fail(outcome_->name() + " failed: the message holds " +
                     std::to_string(bytes.size()) + " bytes, the receive expects " +
                     std::to_string(expected));
    } else {
      std::memcpy(tensor_.data_ptr(), bytes.data(), expected);
      shared_->store->remove(key_);
      outcome_->succeed();
    }
    return outcome_->test();
  }

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<baton::TransferOutcome> outcome_;
  at::Tensor tensor_;
  std::string key_;  // empty for a send
  std::shared_ptr<baton::TransportAbortHandle> abort_;
};

class StoreTransport final : public baton::Transport {
 public:
  StoreTransport()
      : shared_(std::make_shared<Shared>()),
        abort_handle_(std::make_shared<baton::TransportAbortHandle>(this)) {}
  ~StoreTransport() override { abort_handle_->detach(); }

  void connect(const baton::TransportContext& ctx) override {
    rank_ = ctx.rank;
    world_size_ = ctx.world_size;
    shared_->store = ctx.store;
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
    const std::size_t bytes = baton::tensor_bytes(tensor);
    const auto* data = static_cast<const std::uint8_t*>(tensor.data_ptr());
    try {
      shared_->store->set(key(rank_, peer, tag, next(sent_, peer, tag)),
                          std::vector<std::uint8_t>(data, data + bytes));
      outcome->succeed();
    } catch (const baton::Error& error) {
      outcome->fail(outcome->name() + " failed: " + error.what());
    }
    return std::make_unique<StoreWork>(shared_, outcome, tensor, "", abort_handle_);
  }

  std::unique_ptr<baton::Work> irecv(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override {
    auto outcome = start(tensor, peer, tag, baton::P2PDirection::kRecv);
    return std::make_unique<StoreWork>(
        shared_, outcome, tensor, key(peer, rank_, tag, next(received_, peer, tag)), abort_handle_);
  }

  void abort(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (shared_->aborted.empty()) shared_->aborted = reason.empty() ? "aborted" : reason;
  }

 private:
  using Counters = std::map<std::pair<int, std::uint64_t>, std::uint64_t>;

  static std::string key(int from, int to, std::uint64_t tag, std::uint64_t n) {
    return "m/" + std::to_string(from) + "/" + std::to_string(to) + "/" + std::to_string(tag) +
           "/" + std::to_string(n);
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
      throw baton::TransportError(outcome->name() + " refused: the transport was aborted (" +
                                  shared_->aborted + ")");
    }
    return outcome;
  }

  int rank_ = 0;
  int world_size_ = 1;
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<baton::TransportAbortHandle> abort_handle_;
  Counters sent_, received_;
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

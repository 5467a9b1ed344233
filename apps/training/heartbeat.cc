#include "heartbeat.h"

#include <map>

#include "baton/durations.h"
#include "baton/log.h"
#include "baton/store_keys.h"

namespace baton_app {

using Clock = std::chrono::steady_clock;

Heartbeat::Heartbeat(std::shared_ptr<baton::Store> store, int rank, std::vector<int> neighbours,
                     std::chrono::milliseconds period,
                     std::function<void(const std::string&)> on_hung)
    : store_(std::move(store)),
      rank_(rank),
      neighbours_(std::move(neighbours)),
      period_(period),
      on_hung_(std::move(on_hung)) {
  if (store_ == nullptr || period_.count() <= 0 || neighbours_.empty()) return;
  thread_ = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  try {
    store_->add(baton::store_keys::heartbeat_done(rank_), 1);
  } catch (const std::exception&) {
    // The store may be gone with the launcher; nobody is left to watch.
  }
}

void Heartbeat::run() {
  struct Seen {
    std::int64_t count = 0;
    Clock::time_point changed;
  };
  std::map<int, Seen> seen;
  // Beats well inside the period, so that a loaded machine does not look like a hang.
  const auto beat = std::max(std::chrono::milliseconds(100), period_ / 5);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    try {
      store_->add(baton::store_keys::heartbeat(rank_), 1);
      const auto now = Clock::now();
      for (auto it = neighbours_.begin(); it != neighbours_.end();) {
        const int peer = *it;
        const std::int64_t count = store_->add(baton::store_keys::heartbeat(peer), 0);
        Seen& last = seen[peer];
        if (count != last.count || last.count == 0) {
          // Not started yet counts as alive: set-up times differ between ranks.
          last = {count, now};
          ++it;
          continue;
        }
        if (now - last.changed < period_ ||
            store_->add(baton::store_keys::heartbeat_done(peer), 0) > 0) {
          ++it;
          continue;
        }
        const std::string why = "rank " + std::to_string(peer) + " has sent no heartbeat for " +
                                baton::format_seconds(period_) +
                                " (world.heartbeat_s): it is hung (stopped, or stuck outside "
                                "baton) or cut off from the store's host by the network; "
                                "see its own output";
        BATON_LOG_ERROR("heartbeat", why);
        on_hung_(why);
        it = neighbours_.erase(it);
      }
    } catch (const std::exception&) {
      // A store that fails is reported by whoever uses it next; the heartbeat just stops.
      lock.lock();
      break;
    }
    lock.lock();
    wake_.wait_for(lock, beat, [this] { return stopping_; });
  }
}

}  // namespace baton_app

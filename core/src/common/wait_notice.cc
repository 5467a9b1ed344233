#include "baton/wait_notice.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "baton/log.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kRepeatEvery(10);
constexpr std::chrono::milliseconds kScanEvery(250);

std::string seconds_text(Clock::duration elapsed) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", std::chrono::duration<double>(elapsed).count());
  return text;
}

std::chrono::milliseconds delay_from_environment() {
  const char* text = std::getenv("BATON_WAIT_NOTICE_S");
  if (text && *text) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (*end == '\0' && seconds > 0 && seconds < 86400) {
      return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
    }
  }
  return std::chrono::seconds(5);
}

// The waits in progress, and a thread that looks at them a few times a second. Registering a
// wait takes a lock and an insert (no wake-up), so the notice costs the fast path almost
// nothing. Never destroyed: the thread may outlive static destruction at exit.
class Registry {
 public:
  static Registry& instance() {
    static Registry* registry = new Registry();
    return *registry;
  }

  std::uint64_t add(const char* component, std::string what, WaitNotice::Describe describe,
                    const void* context) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!watcher_started_) {
      std::thread([this] { watch(); }).detach();
      watcher_started_ = true;
    }
    const std::uint64_t id = ++last_id_;
    const Clock::time_point now = Clock::now();
    waits_.emplace(id,
                   Wait{component, std::move(what), describe, context, now, now + delay_, false});
    return id;
  }

  void remove(std::uint64_t id) {
    Wait wait;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const auto found = waits_.find(id);
      if (found == waits_.end()) return;
      wait = std::move(found->second);
      waits_.erase(found);
    }
    if (wait.noticed) {
      BATON_LOG_INFO(wait.component, "stopped waiting for "
                                         << wait.what << " after "
                                         << seconds_text(Clock::now() - wait.started));
    }
  }

  void set_delay(std::chrono::milliseconds delay) {
    const std::lock_guard<std::mutex> lock(mutex_);
    delay_ = delay;
  }

 private:
  struct Wait {
    const char* component = "";
    std::string what;  // built from `describe` when the wait is first noticed
    WaitNotice::Describe describe = nullptr;
    const void* context = nullptr;
    Clock::time_point started;
    Clock::time_point next_notice;
    bool noticed = false;
  };

  Registry() : delay_(delay_from_environment()) {}

  void watch() {
    for (;;) {
      std::this_thread::sleep_for(kScanEvery);
      std::vector<std::pair<const char*, std::string>> notices;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        const Clock::time_point now = Clock::now();
        for (auto& [id, wait] : waits_) {
          if (now < wait.next_notice) continue;
          // The waiting thread is blocked in remove() until this lock is released, so the
          // context is alive.
          if (wait.describe != nullptr) {
            wait.what = wait.describe(wait.context);
            wait.describe = nullptr;
          }
          notices.emplace_back(wait.component, "still waiting for " + wait.what + " (" +
                                                   seconds_text(now - wait.started) + " so far)");
          wait.noticed = true;
          wait.next_notice = now + kRepeatEvery;
        }
      }
      for (const auto& [component, message] : notices) {
        log(LogLevel::kInfo, component, message);
      }
    }
  }

  std::mutex mutex_;
  std::unordered_map<std::uint64_t, Wait> waits_;
  std::uint64_t last_id_ = 0;
  bool watcher_started_ = false;
  std::chrono::milliseconds delay_;
};

}  // namespace

WaitNotice::WaitNotice(const char* component, std::string what)
    : id_(Registry::instance().add(component, std::move(what), nullptr, nullptr)) {}

WaitNotice::WaitNotice(const char* component, Describe describe, const void* context)
    : id_(Registry::instance().add(component, std::string(), describe, context)) {}

WaitNotice::~WaitNotice() {
  Registry::instance().remove(id_);
}

void set_wait_notice_delay(std::chrono::milliseconds delay) {
  Registry::instance().set_delay(delay);
}

}  // namespace baton

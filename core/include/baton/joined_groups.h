// The groups a transport joined (AllReduceTransport), by handle: what every transport keeps
// the same way — how often each rank list was joined (for baton::group_key), the groups in
// join order, and the lookup of a handle that names what was never joined. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/transport.h"

namespace baton {

template <typename Group>
class JoinedGroups {
 public:
  // How often `ranks` was joined before (0 the first time), counting this join.
  int next_occurrence(const std::vector<int>& ranks) {
    std::lock_guard<std::mutex> lock(mutex_);
    return joins_[ranks]++;
  }

  // Keeps `group`; returns its handle.
  int add(std::unique_ptr<Group> group) {
    std::lock_guard<std::mutex> lock(mutex_);
    groups_.push_back(std::move(group));
    return static_cast<int>(groups_.size()) - 1;
  }

  // The group of `handle`; TransportError "<who>iallreduce() on group N, which was never
  // joined" otherwise. Groups live as long as the registry.
  Group& at(int handle, const std::string& who) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (handle < 0 || handle >= static_cast<int>(groups_.size())) {
      throw TransportError(who + "iallreduce() on group " + std::to_string(handle) +
                           ", which was never joined");
    }
    return *groups_[static_cast<std::size_t>(handle)];
  }

  // Calls `visit` on every group, under the registry's lock (`visit` must not join).
  template <typename Visit>
  void for_each(Visit visit) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& group : groups_) visit(*group);
  }

  // Destroys the groups (their threads, their connections).
  void clear() {
    std::vector<std::unique_ptr<Group>> gone;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      gone.swap(groups_);
    }
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Group>> groups_;  // by handle
  std::map<std::vector<int>, int> joins_;
};

}  // namespace baton

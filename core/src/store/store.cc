// Out-of-line destructors anchor the store interface's vtable and type information in
// libbaton_plan, so plugins and the core agree on one type.
#include "baton/store.h"

#include <thread>

#include "baton/stores.h"

namespace baton {

Store::~Store() = default;

bool Store::remove(const std::string& /*key*/) {
  return false;
}

StoreError::~StoreError() = default;

std::int64_t wait_for_counter(Store& store, const std::string& key, std::int64_t expected,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::int64_t count = store.add(key, 0);
  while (count < expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    count = store.add(key, 0);
  }
  return count;
}

}  // namespace baton

// gloo's PrefixStore: every key gets "<prefix>/" in front, so stores compose and runs (or
// transports within a run) get their own namespace.
#include "baton/store.h"

namespace baton {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> inner)
    : prefix_(std::move(prefix) + "/"), inner_(std::move(inner)) {
  if (inner_ == nullptr) throw StoreError("PrefixStore '" + prefix_ + "': no inner store");
}

void PrefixStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  inner_->set(prefix_ + key, value);
}

std::vector<std::uint8_t> PrefixStore::get(const std::string& key,
                                           std::chrono::milliseconds timeout) {
  return inner_->get(prefix_ + key, timeout);
}

std::int64_t PrefixStore::add(const std::string& key, std::int64_t delta) {
  return inner_->add(prefix_ + key, delta);
}

bool PrefixStore::remove(const std::string& key) {
  return inner_->remove(prefix_ + key);
}

}  // namespace baton

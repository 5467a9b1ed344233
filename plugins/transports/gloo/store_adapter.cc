#include "store_adapter.h"

namespace baton_gloo {

StoreAdapter::StoreAdapter(std::shared_ptr<baton::Store> store, std::chrono::milliseconds timeout)
    : store_(std::move(store)), timeout_(timeout) {}

void StoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  store_->set(key, std::vector<std::uint8_t>(data.begin(), data.end()));
}

std::vector<char> StoreAdapter::get(const std::string& key) {
  const std::vector<std::uint8_t> value = store_->get(key, timeout_);
  return std::vector<char>(value.begin(), value.end());
}

void StoreAdapter::wait(const std::vector<std::string>& keys) {
  wait(keys, timeout_);
}

void StoreAdapter::wait(const std::vector<std::string>& keys,
                        const std::chrono::milliseconds& /*gloo_timeout*/) {
  // The adapter's own timeout, not gloo's: gloo passes its context's, which the transport
  // sets to a fifth of the run's while connecting (see GlooTransport::connect). baton's
  // get() is the wait (and its error names the key and the timeout).
  for (const std::string& key : keys) store_->get(key, timeout_);
}

}  // namespace baton_gloo

// gloo's rendezvous store interface over a baton::Store, so gloo's full-mesh connect meets
// its peers through the run's (namespaced) store.
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>

#include "baton/store.h"

namespace baton_gloo {

class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(std::shared_ptr<baton::Store> store, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  std::shared_ptr<baton::Store> store_;
  std::chrono::milliseconds timeout_;
};

}  // namespace baton_gloo

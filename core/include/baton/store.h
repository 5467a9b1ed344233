// Rendezvous key-value stores. Ranks publish and look up addresses (or NCCL unique ids)
// through a store; keys are namespaced per run (PrefixStore) so two runs never collide.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/export.h"

namespace baton {

// A store operation failed: a key did not appear in time, the store cannot be reached or
// hosted, or its backing files cannot be written.
class BATON_API StoreError : public Error {
 public:
  using Error::Error;
  ~StoreError() override;
};

class BATON_API Store {
 public:
  virtual ~Store();
  virtual void set(const std::string& key, const std::vector<std::uint8_t>& value) = 0;
  // Waits until `key` exists (up to `timeout`), then returns its value. Throws StoreError
  // naming the key and the timeout.
  virtual std::vector<std::uint8_t> get(const std::string& key,
                                        std::chrono::milliseconds timeout) = 0;
  // Atomically adds `delta` to the integer at `key` (0 if absent); returns the new value.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  // Deletes `key`, so that a long run's per-step keys do not pile up; returns whether it
  // existed. A store that cannot delete keeps the key and returns false (the default).
  virtual bool remove(const std::string& key);
};

// Prepends "<prefix>/" to every key (gloo's PrefixStore).
class BATON_API PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> inner);
  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  bool remove(const std::string& key) override;

 private:
  std::string prefix_;
  std::shared_ptr<Store> inner_;
};

}  // namespace baton

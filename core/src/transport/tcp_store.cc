// baton's Store over LibTorch's c10d::TCPStore. LibTorch's distributed headers are heavy and
// stay in this file. get() polls check() instead of calling c10d's wait(): a timed-out
// c10d wait leaves its reply in flight on the socket, which would answer the next request.
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <mutex>
#include <thread>

#include "baton/stores.h"
#include "baton/transport_support.h"

namespace baton {

namespace {

std::string error_text(const c10::Error& error) {
  return error.what_without_backtrace();
}

}  // namespace

class TcpStore::Impl {
 public:
  c10::intrusive_ptr<c10d::TCPStore> store;
  // One client socket: requests from several threads (progress in the background, checkpoints
  // on the main thread) must not interleave on it.
  std::mutex mutex;
  std::string host;
  int port = 0;

  std::string where() const { return "tcp store " + host + ":" + std::to_string(port); }
};

TcpStore::TcpStore(const TcpStoreOptions& options) : impl_(std::make_unique<Impl>()) {
  if (options.port < 0 || options.port > 65535) {
    throw StoreError("tcp store: port " + std::to_string(options.port) + " is not a TCP port");
  }
  if (!options.is_server && options.port == 0) {
    throw StoreError("tcp store: a client needs the server's port; 0 only works for the host");
  }
  c10d::TCPStoreOptions c10d_options;
  c10d_options.port = static_cast<std::uint16_t>(options.port);
  c10d_options.isServer = options.is_server;
  c10d_options.numWorkers = static_cast<std::size_t>(std::max(options.world_size, 1));
  // Ranks meet through keys, not through the store's own worker count, so the host does not
  // block in its constructor.
  c10d_options.waitWorkers = false;
  c10d_options.timeout = options.timeout;
  impl_->host = options.host;
  impl_->port = options.port;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(options.host, c10d_options);
  } catch (const c10::Error& error) {
    if (options.is_server) {
      throw StoreError("cannot host the " + impl_->where() + ": " + error_text(error));
    }
    throw StoreError("cannot reach the " + impl_->where() + " within " +
                     format_seconds(options.timeout) + ": " + error_text(error));
  } catch (const std::exception& error) {
    throw StoreError((options.is_server ? "cannot host the " : "cannot reach the ") +
                     impl_->where() + ": " + error.what());
  }
  impl_->port = impl_->store->getPort();
}

TcpStore::~TcpStore() = default;

int TcpStore::port() const {
  return impl_->port;
}

const std::string& TcpStore::host() const {
  return impl_->host;
}

void TcpStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  try {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->store->set(key, value);
  } catch (const c10::Error& error) {
    throw StoreError("store: set('" + key + "') failed (" + impl_->where() +
                     "): " + error_text(error));
  }
}

std::vector<std::uint8_t> TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::chrono::milliseconds pause(1);
  try {
    for (;;) {
      {
        const std::lock_guard<std::mutex> lock(impl_->mutex);
        if (impl_->store->check({key})) return impl_->store->get(key);
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) {
        throw StoreError("store: key '" + key + "' was not set within " + format_seconds(timeout) +
                         " (" + impl_->where() + ")");
      }
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
  } catch (const c10::Error& error) {
    throw StoreError("store: get('" + key + "') failed (" + impl_->where() +
                     "): " + error_text(error));
  }
}

std::int64_t TcpStore::add(const std::string& key, std::int64_t delta) {
  try {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->store->add(key, delta);
  } catch (const c10::Error& error) {
    throw StoreError("store: add('" + key + "') failed (" + impl_->where() +
                     "): " + error_text(error));
  }
}

}  // namespace baton

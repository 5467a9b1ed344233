// The server of baton's TCP store: one thread, non-blocking sockets, every length capped
// (store_protocol.h), every peer authenticated by the run's token before it is served.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace baton {

class StoreServer {
 public:
  // Binds `host:port` (port 0: a free one) and starts serving. Throws StoreError naming the
  // address when it cannot (in use: another run, or a store already hosted there).
  StoreServer(const std::string& host, int port, std::string token);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  int port() const { return port_; }

 private:
  void serve();

  std::string token_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};  // written by the destructor to stop the thread
  int port_ = 0;
  std::thread thread_;
};

}  // namespace baton

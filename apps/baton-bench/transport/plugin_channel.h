// The bench's channel through a transport plugin, exactly as the runtime uses one: isend /
// irecv of preallocated tensors, then Work::wait with a timeout.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "baton/transport.h"
#include "channel.h"

namespace baton_app {

class PluginChannel : public BenchChannel {
 public:
  // `transport` is connected and outlives the channel.
  PluginChannel(baton::Transport& transport, int peer, std::chrono::milliseconds timeout);

  std::string name() const override { return "plugin"; }
  void prepare(BenchBuffers& buffers) override;
  void start_send(int slot) override;
  void start_recv(int slot) override;
  void wait_send(int slot) override;
  void wait_recv(int slot) override;
  void send_token() override;
  void recv_token() override;

 private:
  baton::Transport& transport_;
  const int peer_;
  const std::chrono::milliseconds timeout_;
  BenchBuffers* buffers_ = nullptr;
  std::vector<std::unique_ptr<baton::Work>> sends_;
  std::vector<std::unique_ptr<baton::Work>> recvs_;
};

}  // namespace baton_app

// The reference for the gloo plugin: raw gloo, measured the same way. A gloo::rendezvous
// context over gloo's TCP device on loopback (met through gloo's own FileStore), and one
// unbound buffer per slot — gloo's point-to-point API with nothing of baton around it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "channel.h"

namespace gloo {
namespace rendezvous {
class Context;
}
namespace transport {
class Device;
class UnboundBuffer;
}  // namespace transport
}  // namespace gloo

namespace baton_app {

class GlooChannel : public BenchChannel {
 public:
  // Connects to the other rank. `store_dir`: an existing folder, fresh for this run, shared
  // by both ranks. Throws baton::Error saying what failed.
  GlooChannel(int rank, const std::string& store_dir, std::chrono::milliseconds timeout);
  ~GlooChannel() override;

  std::string name() const override { return "reference (raw gloo)"; }
  void prepare(BenchBuffers& buffers) override;
  void start_send(int slot) override;
  void start_recv(int slot) override;
  void wait_send(int slot) override;
  void wait_recv(int slot) override;
  void send_token() override;
  void recv_token() override;

 private:
  void wait(gloo::transport::UnboundBuffer& buffer, bool send, int tag);

  const int peer_;
  const std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  // One per slot: an unbound buffer allows one pending operation.
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> sends_;
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> recvs_;
  std::unique_ptr<gloo::transport::UnboundBuffer> token_send_;
  std::unique_ptr<gloo::transport::UnboundBuffer> token_recv_;
};

}  // namespace baton_app

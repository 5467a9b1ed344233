// What the bench measures through: one way of moving bytes between its two ranks — a
// transport plugin, or the raw library that plugin wraps. The measurement loops
// (method.h) drive every channel the same way, so plugin and reference figures differ
// only by what the channel itself costs.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <string>
#include <vector>

namespace baton_app {

// The memory of one message size, allocated once before the timed loops (as the runtime
// preallocates its receive buffers) and shared by every channel of the run.
struct BenchBuffers {
  std::size_t bytes = 0;
  at::Tensor send;               // the payload every send reads
  std::vector<at::Tensor> recv;  // one destination per slot of the window
  at::Tensor token_send;         // small synchronising messages (see BenchChannel)
  at::Tensor token_recv;

  // Allocates `window` receive buffers of `bytes` each and fills the payload.
  static BenchBuffers allocate(std::size_t bytes, int window);
  int window() const { return static_cast<int>(recv.size()); }
};

// Tags (slots) of the bench's two message streams.
constexpr int kDataTag = 1;
constexpr int kTokenTag = 2;

class BenchChannel {
 public:
  virtual ~BenchChannel() = default;

  // "plugin" or "reference": names the channel in error messages.
  virtual std::string name() const = 0;

  // Binds the channel to the buffers of the next message size; called before any start_*.
  virtual void prepare(BenchBuffers& buffers) = 0;

  // Starts sending `buffers.send` to the other rank (slot: 0 .. window-1; one pending
  // operation per slot).
  virtual void start_send(int slot) = 0;
  // Starts receiving the next data message into `buffers.recv[slot]`.
  virtual void start_recv(int slot) = 0;
  // Block until that operation completed; throw on failure or timeout.
  virtual void wait_send(int slot) = 0;
  virtual void wait_recv(int slot) = 0;

  // Sends / receives one small message on the token tag, blocking: the ranks use it to start
  // timed loops together and to learn when the peer received everything.
  virtual void send_token() = 0;
  virtual void recv_token() = 0;
};

}  // namespace baton_app

#include "channel.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

namespace baton_app {

namespace {

constexpr std::int64_t kTokenBytes = 8;

}  // namespace

BenchBuffers BenchBuffers::allocate(std::size_t bytes, int window) {
  BenchBuffers buffers;
  buffers.bytes = bytes;
  const auto size = static_cast<std::int64_t>(bytes);
  // Touch every page of every buffer now, so that no timed loop pays for page faults.
  buffers.send = at::arange(size, at::kLong).to(at::kByte);
  for (int slot = 0; slot < window; ++slot) buffers.recv.push_back(at::zeros({size}, at::kByte));
  buffers.token_send = at::zeros({kTokenBytes}, at::kByte);
  buffers.token_recv = at::zeros({kTokenBytes}, at::kByte);
  return buffers;
}

}  // namespace baton_app

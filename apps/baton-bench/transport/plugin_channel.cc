#include "plugin_channel.h"

namespace baton_app {

PluginChannel::PluginChannel(baton::Transport& transport, int peer,
                             std::chrono::milliseconds timeout)
    : transport_(transport), peer_(peer), timeout_(timeout) {}

void PluginChannel::prepare(BenchBuffers& buffers) {
  buffers_ = &buffers;
  sends_.clear();
  recvs_.clear();
  sends_.resize(static_cast<std::size_t>(buffers.window()));
  recvs_.resize(static_cast<std::size_t>(buffers.window()));
}

void PluginChannel::start_send(int slot) {
  sends_[static_cast<std::size_t>(slot)] = transport_.isend(buffers_->send, peer_, kDataTag);
}

void PluginChannel::start_recv(int slot) {
  const auto index = static_cast<std::size_t>(slot);
  recvs_[index] = transport_.irecv(buffers_->recv[index], peer_, kDataTag);
}

void PluginChannel::wait_send(int slot) {
  auto& work = sends_[static_cast<std::size_t>(slot)];
  work->wait(timeout_);
  work.reset();
}

void PluginChannel::wait_recv(int slot) {
  auto& work = recvs_[static_cast<std::size_t>(slot)];
  work->wait(timeout_);
  work.reset();
}

void PluginChannel::send_token() {
  transport_.isend(buffers_->token_send, peer_, kTokenTag)->wait(timeout_);
}

void PluginChannel::recv_token() {
  transport_.irecv(buffers_->token_recv, peer_, kTokenTag)->wait(timeout_);
}

}  // namespace baton_app

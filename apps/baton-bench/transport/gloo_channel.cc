#include "gloo_channel.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "baton/error.h"

namespace baton_app {

GlooChannel::GlooChannel(int rank, const std::string& store_dir, std::chrono::milliseconds timeout)
    : peer_(1 - rank), timeout_(timeout) {
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    device_ = gloo::transport::tcp::CreateDevice(attr);
    context_ = std::make_shared<gloo::rendezvous::Context>(rank, 2);
    context_->setTimeout(timeout);
    gloo::rendezvous::FileStore store(store_dir);
    context_->connectFullMesh(store, device_);
  } catch (const std::exception& error) {
    throw baton::Error("raw gloo reference: connecting rank " + std::to_string(rank) +
                       " failed: " + error.what());
  }
}

GlooChannel::~GlooChannel() {
  // Buffers go before the context and device they were created from.
  sends_.clear();
  recvs_.clear();
  token_send_.reset();
  token_recv_.reset();
  context_.reset();
  device_.reset();
}

void GlooChannel::prepare(BenchBuffers& buffers) {
  sends_.clear();
  recvs_.clear();
  for (int slot = 0; slot < buffers.window(); ++slot) {
    // Every send slot reads the same payload, as the plugin channel's sends do.
    sends_.push_back(context_->createUnboundBuffer(buffers.send.data_ptr(), buffers.bytes));
    recvs_.push_back(context_->createUnboundBuffer(
        buffers.recv[static_cast<std::size_t>(slot)].data_ptr(), buffers.bytes));
  }
  token_send_ = context_->createUnboundBuffer(buffers.token_send.data_ptr(),
                                              static_cast<std::size_t>(buffers.token_send.numel()));
  token_recv_ = context_->createUnboundBuffer(buffers.token_recv.data_ptr(),
                                              static_cast<std::size_t>(buffers.token_recv.numel()));
}

void GlooChannel::start_send(int slot) {
  sends_[static_cast<std::size_t>(slot)]->send(peer_, kDataTag);
}

void GlooChannel::start_recv(int slot) {
  recvs_[static_cast<std::size_t>(slot)]->recv(peer_, kDataTag);
}

void GlooChannel::wait_send(int slot) {
  wait(*sends_[static_cast<std::size_t>(slot)], true, kDataTag);
}

void GlooChannel::wait_recv(int slot) {
  wait(*recvs_[static_cast<std::size_t>(slot)], false, kDataTag);
}

void GlooChannel::send_token() {
  token_send_->send(peer_, kTokenTag);
  wait(*token_send_, true, kTokenTag);
}

void GlooChannel::recv_token() {
  token_recv_->recv(peer_, kTokenTag);
  wait(*token_recv_, false, kTokenTag);
}

void GlooChannel::wait(gloo::transport::UnboundBuffer& buffer, bool send, int tag) {
  // Worded only on failure: the reference pays for nothing the plugin's fast path skips.
  const auto what = [&] {
    return std::string(send ? "send to" : "recv from") + " rank " + std::to_string(peer_) +
           " (slot " + std::to_string(tag) + ", " + std::to_string(buffer.size) + " bytes)";
  };
  bool completed = false;
  try {
    // gloo throws when the timeout passes or the connection breaks.
    completed = send ? buffer.waitSend(timeout_) : buffer.waitRecv(timeout_);
  } catch (const std::exception& error) {
    throw baton::Error("raw gloo reference: " + what() + " failed: " + error.what());
  }
  if (!completed) throw baton::Error("raw gloo reference: " + what() + " was aborted");
}

}  // namespace baton_app

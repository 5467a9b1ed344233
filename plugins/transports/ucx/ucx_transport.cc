#include "ucx_transport.h"

#include <unistd.h>
#include <algorithm>

#include <cstring>
#include <thread>

#include "baton/log.h"
#include "baton/store.h"
#include "baton/transport_support.h"
#include "cuda_order.h"
#include "peer_errors.h"
#include "tag_layout.h"

namespace baton_ucx {

namespace {

std::string address_key(int rank) {
  return "ucx-address/" + std::to_string(rank);
}

std::string process_key(int rank) {
  return "ucx-process/" + std::to_string(rank);
}

// Completion of a request that is not a transfer (endpoint flush during connect).
struct Flush {
  std::atomic<bool> done{false};
  ucs_status_t status = UCS_OK;
};

void on_flush_complete(void* request, ucs_status_t status, void* user_data) {
  auto* flush = static_cast<Flush*>(user_data);
  flush->status = status;
  flush->done.store(true);
  ucp_request_free(request);
}

}  // namespace

UcxTransport::UcxTransport(const UcxOptions& options)
    : options_(options),
      worker_(std::make_unique<Worker>(options.net_devices, options.excluded_transports)) {
  ProgressEngine::Hooks hooks;
  hooks.after_progress = [this] { handle_peer_failures_locked(); };
  hooks.has_outstanding = [this] { return outstanding_.load() > 0; };
  hooks.on_fatal = [this](const std::string& why) {
    // Called by the progress thread outside the mutex. The engine keeps ticking, so
    // transfers still move, only with more latency; say so once.
    BATON_LOG_WARN("ucx", why << "; progress falls back to polling every "
                              << ProgressEngine::kOutstandingTick.count() << " ms");
  };
  engine_ = std::make_shared<ProgressEngine>(worker_->handle(), worker_->event_fd(),
                                             options_.poll_window, std::move(hooks));
}

UcxTransport::~UcxTransport() {
  abort_handle_->detach();
  process_watch_.reset();  // its callback takes the engine's lock
  {
    auto lock = engine_->caller_lock();
    closing_ = true;
    if (control_request_ != nullptr) ucp_request_cancel(worker_->handle(), control_request_);
    // Sends complete only once matched (ucp_tag_send_sync_nbx), so nothing that completed
    // is still on its way; what is pending now fails, and pending receives are cancelled.
    fail_in_flight_locked(": the transport was shut down", /*cancel_receives=*/true);
    if (!aborted_) send_notices_locked("it shut down its transport");
  }
  // The groups' threads end once their transfers failed (above); later posts are refused.
  stop_groups("the transport was shut down");
  groups_.clear();
  // The notices get a moment to leave; then the endpoints are closed by force. (A graceful
  // close can wait forever on a peer that is tearing down at the same time, and UCX 1.13
  // aborts the process when a worker is destroyed with such a close pending.)
  const std::chrono::milliseconds moment(1000);
  wait_for_requests(notice_requests_, std::min(teardown_timeout_, moment));
  {
    auto lock = engine_->caller_lock();
    close_endpoints_locked();
  }
  wait_for_requests(close_requests_, moment);
  engine_->stop();
  engine_->drain();  // completes what the closes and cancels left, before the worker goes
  for (void* request : notice_requests_) ucp_request_free(request);
  for (void* request : close_requests_) ucp_request_free(request);
  // UCX may still point into tensors of requests that never completed: release them only
  // once the worker is gone.
  worker_.reset();
  in_flight_.clear();
}

void UcxTransport::connect(const baton::TransportContext& ctx) {
  const std::string who = baton::rank_prefix(ctx.rank);
  if (ctx.world_size < 1 || ctx.rank < 0 || ctx.rank >= ctx.world_size) {
    throw baton::TransportError(who + "ucx: rank outside a world of " +
                                std::to_string(ctx.world_size) + " ranks");
  }
  if (ctx.world_size > kMaxWorldSize) {
    throw baton::TransportError(who + "ucx: a world of " + std::to_string(ctx.world_size) +
                                " ranks does not fit the " + std::to_string(kRankBits) +
                                " rank bits of the UCX tag");
  }
  if (ctx.store == nullptr) throw baton::TransportError(who + "ucx: no rendezvous store");
  {
    auto lock = engine_->caller_lock();
    if (connected_ || rank_ >= 0) {
      throw baton::TransportError(who + "ucx: connect() was already called");
    }
    rank_ = ctx.rank;
    world_size_ = ctx.world_size;
  }
  store_ = ctx.store;
  timeout_ = ctx.timeout;
  const std::chrono::milliseconds timeout =
      options_.connect_timeout.count() > 0 ? options_.connect_timeout : ctx.timeout;
  teardown_timeout_ = timeout;
  // Peers' wire-up requests reach this worker as soon as its address is published.
  engine_->start();
  connect_peers(ctx, timeout);
  auto lock = engine_->caller_lock();
  post_control_receive_locked();
  connected_ = true;
}

ucs_status_t UcxTransport::create_endpoint(const std::vector<std::uint8_t>& address, Peer* link,
                                           bool detect_failure) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
  if (detect_failure) {
    // PEER: a peer that dies fails this endpoint's operations (on_peer_error) instead of
    // leaving them pending until their waits time out.
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &UcxTransport::on_peer_error;
    params.err_handler.arg = link;
  }
  return ucp_ep_create(worker_->handle(), &params, &link->ep);
}

void UcxTransport::connect_peers(const baton::TransportContext& ctx,
                                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (options_.detect_peer_failure) {
    process_watch_ = std::make_unique<PeerProcessWatch>([this](int peer, const std::string& why) {
      {
        auto lock = engine_->caller_lock();
        mark_peer_failed_locked(peer, why);
      }
      engine_->poke();  // the progress thread fails the peer's operations
    });
  }
  publish_this_rank(ctx);
  {
    auto lock = engine_->caller_lock();
    peers_.resize(static_cast<std::size_t>(ctx.world_size));
  }
  for (int peer = 0; peer < ctx.world_size; ++peer) {
    if (peer != ctx.rank) connect_to(ctx, peer, timeout);
  }
  complete_wire_up(ctx, deadline, timeout);
}

void UcxTransport::publish_this_rank(const baton::TransportContext& ctx) {
  try {
    // Before the address: whoever reads the address finds the process too.
    const std::string process = PeerProcessWatch::this_process();
    ctx.store->set(process_key(ctx.rank),
                   std::vector<std::uint8_t>(process.begin(), process.end()));
    ctx.store->set(address_key(ctx.rank), worker_->address());
  } catch (const std::exception& error) {
    throw baton::TransportError(baton::rank_prefix(ctx.rank) +
                                "ucx: cannot publish this rank's worker address: " + error.what());
  }
}

void UcxTransport::connect_to(const baton::TransportContext& ctx, int peer,
                              std::chrono::milliseconds timeout) {
  const std::string failed = baton::rank_prefix(ctx.rank) + "ucx: connecting to rank " +
                             std::to_string(peer) + " failed: ";
  std::vector<std::uint8_t> address, process;
  try {
    address = ctx.store->get(address_key(peer), timeout);
    process = ctx.store->get(process_key(peer), timeout);
  } catch (const std::exception& error) {
    throw baton::TransportError(failed + error.what());
  }
  // A peer on this machine is watched through its process, so its endpoint can leave
  // UCX free to use shared memory; one in this very process cannot die apart from it.
  bool watched = false;
  pid_t pid = 0;
  int pidfd = -1;
  if (options_.detect_peer_failure) {
    pid = PeerProcessWatch::local_pid(std::string(process.begin(), process.end()));
    if (pid > 0 && pid != ::getpid()) pidfd = PeerProcessWatch::open(pid);
    watched = pid > 0 && (pid == ::getpid() || pidfd >= 0);
  }
  auto link = std::make_unique<Peer>();
  link->owner = this;
  link->rank = peer;
  auto lock = engine_->caller_lock();
  ucs_status_t status =
      create_endpoint(address, link.get(), options_.detect_peer_failure && !watched);
  if (status == UCS_ERR_UNREACHABLE && options_.detect_peer_failure) {
    // UCX 1.13's shared-memory transports cannot report a failed peer; when UCX_TLS leaves
    // nothing else, connect without that (a dead peer then shows as a wait's timeout).
    status = create_endpoint(address, link.get(), false);
    if (status == UCS_OK) {
      BATON_LOG_WARN("ucx",
                     "neither this rank's watch of local processes (pidfd) nor a "
                     "transport in UCX_TLS can report a failed peer to rank "
                         << peer
                         << "; connected without failure detection (a dead peer shows "
                            "as a timeout)");
    }
  }
  if (status != UCS_OK) {
    if (pidfd >= 0) ::close(pidfd);
    throw baton::TransportError(failed + "ucp_ep_create: " + status_text(status));
  }
  peers_[peer] = std::move(link);  // with the endpoint, so its error handler finds it
  // Watched only now: an exit seen before the link existed would have nowhere to go.
  if (pidfd >= 0) process_watch_->watch(peer, pid, pidfd);
}

void UcxTransport::complete_wire_up(const baton::TransportContext& ctx,
                                    std::chrono::steady_clock::time_point deadline,
                                    std::chrono::milliseconds timeout) {
  const std::string who = baton::rank_prefix(ctx.rank);
  // Flushing an endpoint completes its wire-up, so an unreachable peer fails here, within
  // the timeout, and not at the first transfer.
  std::vector<std::unique_ptr<Flush>> flushes(peers_.size());
  {
    auto lock = engine_->caller_lock();
    for (std::size_t peer = 0; peer < peers_.size(); ++peer) {
      if (peers_[peer] == nullptr) continue;
      flushes[peer] = std::make_unique<Flush>();
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      param.cb.send = &on_flush_complete;
      param.user_data = flushes[peer].get();
      ucs_status_ptr_t request = ucp_ep_flush_nbx(peers_[peer]->ep, &param);
      if (!UCS_PTR_IS_PTR(request)) {
        flushes[peer]->status = UCS_PTR_STATUS(request);
        flushes[peer]->done.store(true);
      }
    }
  }
  for (std::size_t peer = 0; peer < flushes.size(); ++peer) {
    if (flushes[peer] == nullptr) continue;
    while (!flushes[peer]->done.load()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        // The request still points at flushes[peer]; the transport cannot be used any more,
        // and its destructor force-closes the endpoints, which completes the request.
        abort("connect() failed");
        flushes[peer].release();
        throw baton::TransportError(who + "ucx: connecting to rank " + std::to_string(peer) +
                                    " timed out after " + baton::format_seconds(timeout) +
                                    " (the endpoint's wire-up did not complete)");
      }
      engine_->poke();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (flushes[peer]->status != UCS_OK) {
      throw baton::TransportError(
          who + "ucx: connecting to rank " + std::to_string(peer) +
          " failed: " + explain_peer_status(flushes[peer]->status, static_cast<int>(peer)));
    }
  }
}

std::unique_ptr<baton::Work> UcxTransport::isend(const at::Tensor& tensor, int peer,
                                                 std::uint64_t tag) {
  return post(tensor, peer, tag, baton::P2PDirection::kSend);
}

std::unique_ptr<baton::Work> UcxTransport::irecv(const at::Tensor& tensor, int peer,
                                                 std::uint64_t tag) {
  return post(tensor, peer, tag, baton::P2PDirection::kRecv);
}

baton::Viability UcxTransport::supports_device(const c10::Device& device) const {
  if (device.is_cpu()) return baton::Viability::yes();
  if (!device.is_cuda()) return baton::Viability::no("UCX moves CPU and CUDA tensors only");
  if (worker_->supports_cuda_memory()) return baton::Viability::yes();
  return baton::Viability::no(
      "this UCX cannot move CUDA memory (UCX built without CUDA support, or UCX_TLS leaves out "
      "its CUDA transports)");
}

void UcxTransport::check_memory(const at::Tensor& tensor, const Operation& operation) const {
  if (tensor.device().is_cpu()) return;
  if (!tensor.device().is_cuda()) {
    throw baton::TransportError(operation.name() + ": the tensor is on " + tensor.device().str() +
                                "; this transport moves CPU and CUDA tensors only");
  }
  if (!worker_->supports_cuda_memory()) {
    throw baton::TransportError(
        operation.name() + ": the tensor is on " + tensor.device().str() +
        ", but this UCX cannot move CUDA memory (UCX built without CUDA support, or UCX_TLS "
        "leaves out its CUDA transports)");
  }
}

void UcxTransport::throw_if_unusable_locked(const Operation& operation, int peer) {
  if (aborted_) {
    throw baton::TransportError(operation.name() + ": the transport was aborted: " + abort_reason_);
  }
  if (closing_) throw baton::TransportError(operation.name() + ": the transport is shutting down");
  const Peer& link = *peers_[peer];
  if (link.failure.empty()) return;
  if (operation.what().direction == baton::P2PDirection::kRecv) {
    // What the peer sent before it went away may still be waiting here.
    ucp_tag_recv_info_t info{};
    const std::uint64_t tag = wire_tag(peer, operation.what().tag);
    if (ucp_tag_probe_nb(worker_->handle(), tag, kFullTagMask, 0, &info) != nullptr) return;
  }
  throw baton::TransportError(operation.name() + " failed: " + link.failure);
}

std::shared_ptr<Operation> UcxTransport::checked_operation(const at::Tensor& tensor, int peer,
                                                           std::uint64_t tag,
                                                           baton::P2PDirection direction,
                                                           bool collective) {
  const bool send = direction == baton::P2PDirection::kSend;
  int rank;
  int world_size;
  {
    auto lock = engine_->caller_lock();
    if (!connected_) {
      throw baton::TransportError(std::string("ucx: ") + (send ? "isend" : "irecv") +
                                  "() before connect()");
    }
    rank = rank_;
    world_size = world_size_;
  }
  baton::check_p2p_arguments(tensor, rank, world_size, peer, direction, /*allow_non_cpu=*/true);
  auto operation = std::make_shared<Operation>(
      rank, baton::P2PDescription{direction, peer, tag, baton::tensor_bytes(tensor)}, tensor);
  check_memory(tensor, *operation);
  if (operation->is_cuda()) wait_for_queued_cuda_work(operation->name().c_str());
  if (tag > kMaxUserTag && !collective) {
    throw baton::TransportError(operation->name() + ": tag " + baton::format_tag(tag) +
                                " is too large; the UCX transport carries tags up to " +
                                baton::format_tag(kMaxUserTag) + " (" +
                                std::to_string(kUserTagBits) + " bits)");
  }
  return operation;
}

std::unique_ptr<baton::Work> UcxTransport::post(const at::Tensor& tensor, int peer,
                                                std::uint64_t tag, baton::P2PDirection direction,
                                                bool collective) {
  const bool send = direction == baton::P2PDirection::kSend;
  std::shared_ptr<Operation> operation =
      checked_operation(tensor, peer, tag, direction, collective);
  bool pending = false;
  {
    auto lock = engine_->caller_lock();
    throw_if_unusable_locked(*operation, peer);
    auto owned = std::make_unique<InFlight>();
    InFlight* entry = owned.get();
    entry->owner = this;
    entry->operation = operation;
    // Registered before posting, so that a completion reported at any time finds it.
    in_flight_.emplace(entry, std::move(owned));

    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.user_data = entry;
    if (operation->is_cuda()) {
      param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMORY_TYPE;
      param.memory_type = UCS_MEMORY_TYPE_CUDA;
    }
    const baton::P2PDescription& what = operation->what();
    ucs_status_ptr_t request;
    if (send) {
      param.cb.send = &UcxTransport::on_send_complete;
      // Synchronous: a send completes once the receiver matched it, not when UCX buffered it
      // (eager), so a send whose receive is never posted times out like any other wait, and
      // a send to a peer that died fails instead of succeeding into the void.
      request = ucp_tag_send_sync_nbx(
          peers_[peer]->ep, operation->data(), what.bytes,
          collective ? collective_wire_tag(rank_, tag) : wire_tag(rank_, tag), &param);
    } else {
      // UCX 1.13 leaves recv_info unset when a receive completes inside the call, and the
      // received length is what catches a message smaller than the tensor: always complete
      // through the callback.
      param.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
      param.cb.recv = &UcxTransport::on_recv_complete;
      request = ucp_tag_recv_nbx(worker_->handle(), operation->data(), what.bytes,
                                 collective ? collective_wire_tag(peer, tag) : wire_tag(peer, tag),
                                 kFullTagMask, &param);
    }
    auto registered = in_flight_.find(entry);
    if (registered == in_flight_.end()) {
      // Already completed through its callback.
    } else if (UCS_PTR_IS_PTR(request)) {
      entry->request = request;
      pending = true;
    } else {
      finish(*operation, UCS_PTR_STATUS(request), 0);  // only sends complete immediately
      in_flight_.erase(registered);
    }
    outstanding_.store(in_flight_.size());
  }
  if (pending) engine_->poke();
  return std::make_unique<UcxWork>(std::move(operation), engine_, options_.wait_poll,
                                   abort_handle_);
}

void UcxTransport::finish(Operation& operation, ucs_status_t status, std::size_t length) const {
  operation.let_go_of_memory();  // before the outcome: a waiter may reuse the tensor at once
  const baton::P2PDescription& what = operation.what();
  const bool receive = what.direction == baton::P2PDirection::kRecv;
  if (status == UCS_OK && (!receive || length == what.bytes)) {
    operation.succeed();
    return;
  }
  if (receive && (status == UCS_OK || status == UCS_ERR_MESSAGE_TRUNCATED)) {
    const std::string holds = "the receive tensor holds " + std::to_string(what.bytes) + " bytes";
    const std::string sent = status == UCS_ERR_MESSAGE_TRUNCATED && length <= what.bytes
                                 ? "more than " + std::to_string(what.bytes)
                                 : std::to_string(length);
    operation.fail(operation.name() + ": size mismatch: rank " + std::to_string(what.peer) +
                   " sent " + sent + " bytes, " + holds);
    return;
  }
  if (status == UCS_ERR_CANCELED) {
    // Cancelled by abort, shutdown or a peer failure, which failed it with the reason first.
    operation.fail(operation.name() + ": cancelled");
    return;
  }
  const Peer* link =
      what.peer < static_cast<int>(peers_.size()) ? peers_[what.peer].get() : nullptr;
  const std::string why = link != nullptr && !link->failure.empty()
                              ? link->failure
                              : explain_peer_status(status, what.peer);
  operation.fail(operation.name() + " failed: " + why);
}

void UcxTransport::complete_locked(InFlight* entry, ucs_status_t status, std::size_t length) {
  finish(*entry->operation, status, length);
  in_flight_.erase(entry);
  outstanding_.store(in_flight_.size());
}

void UcxTransport::on_send_complete(void* request, ucs_status_t status, void* user_data) {
  auto* entry = static_cast<InFlight*>(user_data);
  entry->owner->complete_locked(entry, status, 0);
  ucp_request_free(request);
}

void UcxTransport::on_recv_complete(void* request, ucs_status_t status,
                                    const ucp_tag_recv_info_t* info, void* user_data) {
  auto* entry = static_cast<InFlight*>(user_data);
  entry->owner->complete_locked(entry, status, info != nullptr ? info->length : 0);
  ucp_request_free(request);
}

void UcxTransport::on_peer_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* link = static_cast<Peer*>(arg);
  link->owner->mark_peer_failed_locked(link->rank, explain_peer_status(status, link->rank));
}

void UcxTransport::mark_peer_failed_locked(int peer, const std::string& why) {
  if (peer < 0 || peer >= static_cast<int>(peers_.size()) || peers_[peer] == nullptr) return;
  Peer& link = *peers_[peer];
  if (!link.failure.empty()) return;
  link.failure = why;
  failed_peers_.push_back(peer);  // handled after the progress round
}

void UcxTransport::post_control_receive_locked() {
  control_repost_ = false;
  if (aborted_ || closing_) return;
  ucp_request_param_t param{};
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &UcxTransport::on_control_message;
  param.user_data = this;
  // From any peer: only the user-tag bits are matched.
  ucs_status_ptr_t request =
      ucp_tag_recv_nbx(worker_->handle(), control_buffer_.data(), control_buffer_.size(),
                       kControlTag, kUserTagMask, &param);
  control_request_ = UCS_PTR_IS_PTR(request) ? request : nullptr;
}

void UcxTransport::on_control_message(void* request, ucs_status_t status,
                                      const ucp_tag_recv_info_t* info, void* user_data) {
  auto* self = static_cast<UcxTransport*>(user_data);
  self->control_request_ = nullptr;
  ucp_request_free(request);
  if (status != UCS_OK && status != UCS_ERR_MESSAGE_TRUNCATED) return;  // cancelled
  // The notice names its sender: UCX 1.13 does not fill info->sender_tag reliably here.
  const std::size_t length = std::min(info->length, self->control_buffer_.size());
  if (length < sizeof(std::int32_t)) return;
  std::int32_t peer = -1;
  std::memcpy(&peer, self->control_buffer_.data(), sizeof(peer));
  const std::string text(self->control_buffer_.data() + sizeof(peer), length - sizeof(peer));
  self->mark_peer_failed_locked(
      peer, "peer rank " + std::to_string(peer) + " closed the connection: " + text);
  self->control_repost_ = true;  // not from inside a callback
}

void UcxTransport::handle_peer_failures_locked() {
  if (control_repost_) post_control_receive_locked();
  if (failed_peers_.empty()) return;
  std::vector<int> failed;
  failed.swap(failed_peers_);
  for (const int peer : failed) {
    Peer& link = *peers_[peer];  // set when its endpoint was created
    std::vector<void*> receives;
    for (auto& entry : in_flight_) {
      const baton::P2PDescription& what = entry.second->operation->what();
      if (what.peer != peer) continue;
      // Sends too: closing the endpoint by force cancels them, and the reason comes first.
      entry.second->operation->fail(entry.second->operation->name() + " failed: " + link.failure);
      if (what.direction == baton::P2PDirection::kRecv) receives.push_back(entry.second->request);
    }
    // Cancelling completes (and unregisters) a receive right away: not while iterating.
    for (void* request : receives) ucp_request_cancel(worker_->handle(), request);
    // Closing the endpoint by force now completes its sends (cancelled).
    if (link.ep != nullptr) {
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      ucs_status_ptr_t request = ucp_ep_close_nbx(link.ep, &param);
      if (UCS_PTR_IS_PTR(request)) close_requests_.push_back(request);
      link.ep = nullptr;
    }
  }
}

void UcxTransport::fail_in_flight_locked(const std::string& suffix, bool cancel_receives) {
  std::vector<void*> receives;
  for (auto& entry : in_flight_) {
    Operation& operation = *entry.second->operation;
    operation.fail(operation.name() + suffix);
    if (operation.what().direction == baton::P2PDirection::kRecv) {
      receives.push_back(entry.second->request);
    }
  }
  if (!cancel_receives) return;
  for (void* request : receives) ucp_request_cancel(worker_->handle(), request);
}

void UcxTransport::close_endpoints_locked() {
  for (auto& link : peers_) {
    if (link == nullptr || link->ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = ucp_ep_close_nbx(link->ep, &param);
    if (UCS_PTR_IS_PTR(request)) close_requests_.push_back(request);
    link->ep = nullptr;
  }
}

void UcxTransport::wait_for_requests(const std::vector<void*>& requests,
                                     std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    {
      auto lock = engine_->caller_lock();
      bool pending = false;
      for (void* request : requests) {
        pending = pending || ucp_request_check_status(request) == UCS_INPROGRESS;
      }
      if (!pending || std::chrono::steady_clock::now() >= deadline) return;
    }
    engine_->poke();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void UcxTransport::send_notices_locked(const std::string& text) {
  // The notice: this rank (int32), then the text, cut to fit the receivers' buffer. It is
  // sent once per transport (abort or shutdown), so notice_ stays valid while UCX sends it.
  const std::int32_t me = rank_;
  notice_.assign(reinterpret_cast<const char*>(&me), sizeof(me));
  notice_ += text.substr(0, control_buffer_.size() - sizeof(me));
  for (auto& link : peers_) {
    if (link == nullptr || link->ep == nullptr || !link->failure.empty()) continue;
    ucp_request_param_t param{};
    ucs_status_ptr_t request = ucp_tag_send_nbx(link->ep, notice_.data(), notice_.size(),
                                                wire_tag(rank_, kControlTag), &param);
    if (UCS_PTR_IS_PTR(request)) notice_requests_.push_back(request);
  }
}

void UcxTransport::abort(const std::string& reason) {
  {
    auto lock = engine_->caller_lock();
    if (aborted_ || closing_) return;
    aborted_ = true;
    abort_reason_ = reason;
    fail_in_flight_locked(": the transport was aborted: " + reason, /*cancel_receives=*/true);
    // Peers learn of it at once (and fail their operations with this rank) instead of at
    // their timeouts. The endpoints stay open for the notices; the destructor closes them.
    send_notices_locked("it aborted (" + reason + ")");
  }
  stop_groups("the transport was aborted: " + reason);
  engine_->poke();
}

}  // namespace baton_ucx

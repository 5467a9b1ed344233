// The transport interface: asynchronous point-to-point tensor transfers between ranks.
//
// Receives land in caller-provided (preallocated) tensors: a transport never allocates per
// message. Every wait has a timeout, and every failure names the operation precisely
// ("rank 1: recv from rank 0 (tag 0x10002, 4194304 bytes) timed out after 60 s"). An error
// raised on a background thread is stored and rethrown on the caller's wait().
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/export.h"
#include "baton/plugin.h"
#include "baton/plugin_torch_version.h"
#include "baton/store.h"

namespace baton {

// A transfer failed, timed out, or the transport was aborted.
class BATON_API TransportError : public Error {
 public:
  using Error::Error;
  ~TransportError() override;
};

// One pending send or receive.
class BATON_API Work {
 public:
  virtual ~Work();
  // Blocks until the operation completes or `timeout` passes. Throws TransportError on
  // failure, on timeout (naming peer, tag and size), or when the transport was aborted. A
  // timeout aborts the transport with that reason (no operation is retried after one).
  virtual void wait(std::chrono::milliseconds timeout) = 0;
  // True when complete; false while pending; throws like wait() when it failed.
  virtual bool test() = 0;
};

enum class P2PDirection { kSend, kRecv };

// One operation of a batch (see Transport::post_batch).
struct P2POp {
  P2PDirection direction = P2PDirection::kSend;
  at::Tensor tensor;  // for kRecv: the preallocated destination
  int peer = 0;
  std::uint64_t tag = 0;
};

// What a transport needs to connect: who it is, who the others are, and a store through
// which they meet. The store is namespaced for this run and this transport.
struct TransportContext {
  int rank = 0;
  int world_size = 1;
  std::shared_ptr<Store> store;
  std::chrono::milliseconds timeout{60000};
  // Where this rank's tensors live (world.device: its GPU is the one of its local rank). A GPU
  // transport works on this device; CPU when the caller does not say (a conformance run).
  // (Appended in ABI 2.2: the fields above keep their places; a plugin built for 2.1 or
  // older reads only those, and one built for 2.2 is refused by an older core.)
  c10::Device device{c10::kCPU};
};

class BATON_API Transport : public PluginObject {
 public:
  ~Transport() override;

  // Connects to every peer (rendezvous through ctx.store). Called once, before any transfer.
  virtual void connect(const TransportContext& ctx) = 0;

  // Starts sending `tensor` (contiguous, device the transport supports) to `peer`.
  // Messages with the same (peer, tag) are delivered in the order they were sent.
  virtual std::unique_ptr<Work> isend(const at::Tensor& tensor, int peer, std::uint64_t tag) = 0;

  // Starts receiving into `tensor`, which must be contiguous and exactly the size of the
  // message (a wrong size is a TransportError naming both sizes).
  virtual std::unique_ptr<Work> irecv(const at::Tensor& tensor, int peer, std::uint64_t tag) = 0;

  // Posts several operations at once (transports that can group them do; the default posts
  // them one by one). Works are returned in the order of `ops`.
  virtual std::vector<std::unique_ptr<Work>> post_batch(const std::vector<P2POp>& ops);

  // Makes every pending and future operation fail fast with `reason`.
  virtual void abort(const std::string& reason) = 0;
};

// Version 2 of the transport interface (kTransportInterface): version 1's functions, and
// those below. Released interfaces never change; a plugin that implements this one derives
// from it and lists kTransportInterface (BATON_PLUGIN_WITH_INTERFACES). The core calls these
// only on plugins that list version 2 or later (baton/transport_interfaces.h).
class BATON_API TransportV2 : public Transport {
 public:
  ~TransportV2() override;

  // Whether this transport moves tensors that live on `device`, asked at set-up before
  // connect() (world.device): no, with why ("gloo moves CPU tensors only"), refuses the run
  // before any transfer. A version-1 transport is not asked: its first transfer says.
  virtual Viability supports_device(const c10::Device& device) const = 0;
};

}  // namespace baton

// Optional capabilities of a transport. A transport declares one by also deriving from its
// interface here; the runtime asks with dynamic_cast, so a transport that declares none
// (a third-party one written before these existed) still works, just without the benefit.
#pragma once

#include "baton/export.h"

namespace baton {

// Messages are matched to receives by (peer, tag), never by posting order, and a posted
// receive holds up nothing else (no stream, no queue behind it). The executor then posts
// every receive of a training step at once, into the preallocated buffers, at its first
// communication of the step, so a sender never waits for its peer to reach the matching RECV. Gloo
// and UCX match by tag; NCCL matches by order on a stream and must not declare this.
class BATON_API ReceivesMatchByTag {
 public:
  virtual ~ReceivesMatchByTag();
};

}  // namespace baton

// Out-of-line destructors anchor the transport interfaces' vtables and type
// information in libbaton_core, so plugins and the core agree on one type for dynamic_cast.
#include "baton/transport.h"

namespace baton {

Work::~Work() = default;

Transport::~Transport() = default;

TransportV2::~TransportV2() = default;

std::vector<std::unique_ptr<Work>> Transport::post_batch(const std::vector<P2POp>& ops) {
  std::vector<std::unique_ptr<Work>> works;
  works.reserve(ops.size());
  for (const P2POp& op : ops) {
    works.push_back(op.direction == P2PDirection::kSend ? isend(op.tensor, op.peer, op.tag)
                                                        : irecv(op.tensor, op.peer, op.tag));
  }
  return works;
}

}  // namespace baton

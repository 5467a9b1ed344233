// Helpers every transport plugin uses, so that all transports check tensors the same way and
// word their errors the same way ("rank 1: recv from rank 0 (tag 0x10002, 4194304 bytes)
// timed out after 60 s").
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/durations.h"
#include "baton/export.h"
#include "baton/transport.h"

namespace baton {

// "0x10002"
BATON_API std::string format_tag(std::uint64_t tag);

// One operation, named for error messages: "send to rank 2 (tag 0x3, 4096 bytes)" or
// "recv from rank 0 (tag 0x10002, 4194304 bytes)".
struct BATON_API P2PDescription {
  P2PDirection direction = P2PDirection::kSend;
  int peer = 0;
  std::uint64_t tag = 0;
  std::size_t bytes = 0;

  std::string str() const;
};

// "rank 1: <what>": the prefix every transport error carries.
BATON_API std::string rank_prefix(int rank);

// Checks that `tensor` can be sent or received as is: defined, on the CPU (unless
// `allow_non_cpu`), contiguous (dense, no gaps or overlaps), and that `peer` names another
// rank of the world. Throws TransportError naming the operation and what is wrong.
BATON_API void check_p2p_arguments(const at::Tensor& tensor, int rank, int world_size, int peer,
                                   P2PDirection direction, bool allow_non_cpu = false);

// Byte size of a (contiguous) tensor's data.
BATON_API std::size_t tensor_bytes(const at::Tensor& tensor);

}  // namespace baton

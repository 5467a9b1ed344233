// Shared wording and argument checks for transport plugins.
#include "baton/transport_support.h"

#include <c10/core/Layout.h>

#include <cstdio>
#include <sstream>

namespace baton {

std::string format_tag(std::uint64_t tag) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(tag));
  return text;
}

std::string P2PDescription::str() const {
  std::ostringstream out;
  out << (direction == P2PDirection::kSend ? "send to rank " : "recv from rank ") << peer
      << " (tag " << format_tag(tag) << ", " << bytes << (bytes == 1 ? " byte)" : " bytes)");
  return out.str();
}

std::string rank_prefix(int rank) {
  return "rank " + std::to_string(rank) + ": ";
}

std::size_t tensor_bytes(const at::Tensor& tensor) {
  return static_cast<std::size_t>(tensor.numel()) * tensor.element_size();
}

namespace {

std::string shape_text(at::IntArrayRef values) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) out << (i == 0 ? "" : ", ") << values[i];
  out << ']';
  return out.str();
}

}  // namespace

void check_p2p_arguments(const at::Tensor& tensor, int rank, int world_size, int peer,
                         P2PDirection direction, bool allow_non_cpu) {
  // Every send and receive passes here: the wording is built only for an error.
  const auto fail = [&](const std::string& problem) {
    const char* verb = direction == P2PDirection::kSend ? "send to" : "recv from";
    throw TransportError(rank_prefix(rank) + verb + " rank " + std::to_string(peer) + ": " +
                         problem);
  };
  if (peer < 0 || peer >= world_size) {
    fail("no such rank (the world has ranks 0.." + std::to_string(world_size - 1) + ")");
  }
  if (peer == rank) fail("a rank cannot send to or receive from itself");
  if (!tensor.defined()) fail("the tensor is undefined");
  if (tensor.layout() != c10::kStrided) fail("only dense (strided) tensors can be transferred");
  if (!allow_non_cpu && !tensor.device().is_cpu()) {
    fail("the tensor is on " + tensor.device().str() + "; this transport moves CPU tensors only");
  }
  if (!tensor.is_contiguous()) {
    fail("the tensor is not contiguous (sizes " + shape_text(tensor.sizes()) + ", strides " +
         shape_text(tensor.strides()) + "); pass a contiguous tensor (e.g. tensor.contiguous())");
  }
}

}  // namespace baton

// Anchors Stage's vtable and type information in libbaton_core (see common/interfaces.cc).
#include "baton/stage.h"

namespace baton {

Stage::~Stage() = default;

std::vector<std::pair<std::string, at::Tensor>> Stage::named_buffers() const {
  return {};
}

}  // namespace baton

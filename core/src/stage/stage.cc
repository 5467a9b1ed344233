// Anchors Stage's vtable and type information in libbaton_core (see common/interfaces.cc).
#include "baton/stage.h"

namespace baton {

Stage::~Stage() = default;

}  // namespace baton

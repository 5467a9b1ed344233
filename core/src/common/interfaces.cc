// Out-of-line destructors anchor each interface's vtable and type information in
// libbaton_core, so plugins and the core agree on one type for dynamic_cast.
#include "baton/schedule.h"
#include "baton/stage.h"

namespace baton {

Schedule::~Schedule() = default;
Stage::~Stage() = default;

}  // namespace baton

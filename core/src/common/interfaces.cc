// Out-of-line destructors anchor each interface's vtable and type information in the plan
// layer (libbaton_plan), so plugins and baton agree on one type for dynamic_cast.
#include "baton/schedule.h"

namespace baton {

Schedule::~Schedule() = default;

}  // namespace baton

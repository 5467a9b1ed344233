// Key functions of the plan layer's error classes: their vtables and type information live
// here, in libbaton_plan, so an exception thrown inside a plugin stays valid after the
// plugin's library is unloaded, and catch clauses in baton and in plugins agree on one type.
// The runtime's errors are anchored the same way in libbaton_core (runtime/runtime_errors.cc).
#include "baton/error.h"

namespace baton {

Error::~Error() = default;
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;
PlanError::~PlanError() = default;

}  // namespace baton

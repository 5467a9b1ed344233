// Key functions of the error classes: their vtables and type information live here, in
// libbaton_core, so an exception thrown inside a plugin stays valid after the plugin's
// library is unloaded, and catch clauses in the core and in plugins agree on one type.
#include "baton/error.h"
#include "baton/step_error.h"
#include "baton/store.h"
#include "baton/transport.h"
#include "baton/validator.h"

namespace baton {

Error::~Error() = default;
ConfigError::~ConfigError() = default;
PluginError::~PluginError() = default;
PlanError::~PlanError() = default;
StoreError::~StoreError() = default;
TransportError::~TransportError() = default;
ValidationError::~ValidationError() = default;
StepError::~StepError() = default;

}  // namespace baton

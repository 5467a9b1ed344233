// Key functions of the runtime's error classes, anchored in libbaton_core (see
// common/errors.cc for why).
#include "baton/step_error.h"
#include "baton/store.h"
#include "baton/transport.h"
#include "baton/validator.h"

namespace baton {

TransportError::~TransportError() = default;
ValidationError::~ValidationError() = default;
StepError::~StepError() = default;

}  // namespace baton

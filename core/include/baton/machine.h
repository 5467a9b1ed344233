// What a plugin may ask about the machine it runs on, as the runtime sees it (a transport
// sizing its polling to the CPUs it may use).
#pragma once

#include "baton/export.h"

namespace baton {

// Logical CPUs this process may run on (its affinity mask), at least 1.
BATON_API int cpus_available();

}  // namespace baton

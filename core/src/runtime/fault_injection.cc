#include "fault_injection.h"

#include <csignal>
#include <string>

#include "baton/error.h"

namespace baton {

void FaultInjection::fail_if_named(const Action& action) const {
  if (to_string(action) != fault_.action) return;
  if (fault_.signal != 0) std::raise(fault_.signal);
  const bool receive =
      action.type == ActionType::kRecvForward || action.type == ActionType::kRecvBackward;
  throw Error("injected failure (BATON_INJECT_FAILURE)" +
              std::string(receive ? " at the wait for " + fault_.action : ""));
}

}  // namespace baton

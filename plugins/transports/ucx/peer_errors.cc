#include "peer_errors.h"

#include "worker.h"

namespace baton_ucx {

std::string explain_peer_status(ucs_status_t status, int peer) {
  const std::string who = "peer rank " + std::to_string(peer);
  const std::string ucx = " (UCX: " + status_text(status) + ")";
  switch (status) {
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_NOT_CONNECTED:
      return who + " closed the connection" + ucx;
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_TIMED_OUT:
      // What a killed peer looks like: its end of the connection is gone without a word.
      return who + " closed the connection or stopped responding (exited or crashed?)" + ucx;
    case UCS_ERR_UNREACHABLE:
      return who + " is unreachable" + ucx;
    default:
      return "ucx: " + status_text(status) + " (peer rank " + std::to_string(peer) + ")";
  }
}

}  // namespace baton_ucx

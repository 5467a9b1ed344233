// Turns UCX statuses of a failed connection or transfer ("Endpoint timeout", "Connection
// reset by remote peer") into what a user can act on ("peer rank 2 stopped responding").
#pragma once

#include <ucp/api/ucp.h>

#include <string>

namespace baton_ucx {

std::string explain_peer_status(ucs_status_t status, int peer);

}  // namespace baton_ucx

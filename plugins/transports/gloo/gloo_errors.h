// Turns gloo's exception texts ("[gloo/transport/tcp/pair.cc:589] Connection closed by peer
// [127.0.0.1]:41234") into what a user can act on ("peer rank 2 closed the connection").
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace baton_gloo {

std::string explain_gloo_error(const std::exception& error, int peer);
// The same, naming the other side in words ("a member of group [0, 2, 4]").
std::string explain_gloo_error(const std::exception& error, const std::string& who);

// Who is on the other side of a group's connections, for errors (gloo names a peer by its
// address only): "peer rank 3", or "a member of group [0, 2, 4]".
std::string other_members(const std::vector<int>& ranks, int rank);

}  // namespace baton_gloo

// What both programs (`baton` and `baton-runtime`) share at their top: the usage text, and
// how a command's failure becomes an exit status.
#pragma once

#include <functional>

namespace baton_app {

extern const char* const kUsage;

// Runs `dispatch` and returns its exit status; a UsageError prints the message and the usage
// (exit 2), any other exception its message (exit 1).
int run_guarded(const std::function<int()>& dispatch);

}  // namespace baton_app

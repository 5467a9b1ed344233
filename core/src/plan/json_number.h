// Internal helpers for the hand-written JSON of format_trace.cc and format_summary.cc.
#pragma once

#include <string>

namespace baton {
namespace plan_internal {

// A JSON number with at most `decimals` decimals and no trailing zeros ("1.5", "3", "0.333333").
// Non-finite values, which JSON cannot express, become null.
std::string json_number(double value, int decimals = 6);

}  // namespace plan_internal
}  // namespace baton

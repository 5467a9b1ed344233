// Internal: numbers and strings for the plan layer's JSON (chrome_trace.cc, format_summary.cc),
// through nlohmann-json, which does the escaping and the spelling of numbers.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace baton {
namespace plan_internal {

// `value` rounded to `decimals` decimals, as a JSON value: an integer when it is whole
// ("3", not "3.0"), null when it is not finite (JSON cannot express it).
nlohmann::ordered_json json_number_value(double value, int decimals = 6);

// The same, spelled: "1.5", "3", "0.333333", "null".
std::string json_number(double value, int decimals = 6);

}  // namespace plan_internal
}  // namespace baton

// String and number spelling for the plan layer's JSON outputs, through nlohmann-json.
#include "json_number.h"

#include <cmath>
#include <string>

#include "baton/plan/json_text.h"

namespace baton {

std::string json_quote(std::string_view text) {
  // Bytes that are not UTF-8 become U+FFFD rather than an exception: a name is never worth
  // failing an output for.
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace plan_internal {

nlohmann::ordered_json json_number_value(double value, int decimals) {
  if (!std::isfinite(value)) return nullptr;
  const double scale = std::pow(10.0, decimals);
  const double rounded = std::round(value * scale) / scale;
  if (rounded == std::floor(rounded) && std::fabs(rounded) < 9e15) {
    return static_cast<std::int64_t>(rounded);  // also turns -0 into 0
  }
  return rounded;
}

std::string json_number(double value, int decimals) {
  return json_number_value(value, decimals).dump();
}

}  // namespace plan_internal
}  // namespace baton

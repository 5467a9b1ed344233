// Internal: turning written values (YAML nodes, environment text, --set text) into typed
// ParamValues, with messages that name the key path and where the value was written.
#pragma once

#include <string>

#include "baton/config.h"
#include "baton/params.h"

namespace baton {
namespace config_internal {

// Parses `text` as a YAML scalar or flow sequence ("8", "[a, b]").
RawValue raw_value_from_text(const std::string& text, const ValueOrigin& origin,
                             const std::string& key_path);

// Checks `raw` against `spec` and returns the typed value. Throws ConfigError:
// "run.yaml:7:17: schedule.microbatches: expected int, got 'eight'".
ParamValue typed_value(const ParamSpec& spec, const RawValue& raw, const std::string& key_path);

// The default of `spec` as a typed value (origin "default").
ParamValue default_value(const ParamSpec& spec, const std::string& key_path);

}  // namespace config_internal
}  // namespace baton

// Log lines from the core, the plugins and the programs, through one small interface.
//
// A line reads "[rank 1] info  gloo: connected to 3 peers in 0.4 s" on stderr, written with
// one write() so lines of concurrent threads never interleave. The level comes from
// `run.log_level` (set by the runtime) or BATON_LOG_LEVEL: error, warn, info (the default),
// debug. Plugins use the same calls; they link libbaton_plan like every plugin.
//
//   BATON_LOG_INFO("gloo", "connected to " << peers << " peers in " << seconds << " s");
#pragma once

#include <sstream>
#include <string>

#include "baton/export.h"

namespace baton {

enum class LogLevel : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// "error", "warn", "info", "debug"; false (and `level` untouched) for any other word.
BATON_API bool parse_log_level(const std::string& text, LogLevel* level);
BATON_API const char* log_level_name(LogLevel level);

// The level in force: set_log_level's, else BATON_LOG_LEVEL's (read once), else info.
BATON_API LogLevel log_level();
BATON_API void set_log_level(LogLevel level);
inline bool log_enabled(LogLevel level) {
  return static_cast<int>(level) <= static_cast<int>(log_level());
}

// Who is speaking, put before every line ("rank 1"); empty until the program knows. A
// launcher that already prefixes each rank's lines (baton launch) tells its ranks with
// BATON_LOG_PREFIXED=1, and the rank leaves its own prefix out.
BATON_API void set_log_prefix(const std::string& prefix);

// Writes one line, when `level` is enabled. `component`: "gloo", "runtime", "checkpoint".
BATON_API void log(LogLevel level, const char* component, const std::string& message);

}  // namespace baton

// The message is built only when the level is enabled.
#define BATON_LOG(LEVEL, COMPONENT, MESSAGE)                   \
  do {                                                         \
    if (::baton::log_enabled(LEVEL)) {                         \
      std::ostringstream baton_log_message;                    \
      baton_log_message << MESSAGE;                            \
      ::baton::log(LEVEL, COMPONENT, baton_log_message.str()); \
    }                                                          \
  } while (0)
#define BATON_LOG_ERROR(COMPONENT, MESSAGE) BATON_LOG(::baton::LogLevel::kError, COMPONENT, MESSAGE)
#define BATON_LOG_WARN(COMPONENT, MESSAGE) BATON_LOG(::baton::LogLevel::kWarn, COMPONENT, MESSAGE)
#define BATON_LOG_INFO(COMPONENT, MESSAGE) BATON_LOG(::baton::LogLevel::kInfo, COMPONENT, MESSAGE)
#define BATON_LOG_DEBUG(COMPONENT, MESSAGE) BATON_LOG(::baton::LogLevel::kDebug, COMPONENT, MESSAGE)

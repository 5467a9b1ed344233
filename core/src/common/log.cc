#include "baton/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <mutex>

#include "baton/files.h"

namespace baton {
namespace {

constexpr int kUnset = -1;
std::atomic<int> chosen_level{kUnset};

// Indexed by LogLevel.
constexpr const char* kLevelNames[] = {"error", "warn", "info", "debug"};

std::mutex& prefix_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& prefix() {
  static std::string text;
  return text;
}

LogLevel level_from_environment() {
  LogLevel level = LogLevel::kInfo;
  const char* text = std::getenv("BATON_LOG_LEVEL");
  if (text && *text && !parse_log_level(text, &level)) {
    const std::string warning = std::string("baton: warning: BATON_LOG_LEVEL='") + text +
                                "' is not error, warn, info or debug; using info\n";
    (void)write_fully(STDERR_FILENO, warning);
  }
  return level;
}

}  // namespace

bool parse_log_level(const std::string& text, LogLevel* level) {
  for (int value = 0; value < static_cast<int>(std::size(kLevelNames)); ++value) {
    if (text == kLevelNames[value]) {
      *level = static_cast<LogLevel>(value);
      return true;
    }
  }
  return false;
}

const char* log_level_name(LogLevel level) {
  const int value = static_cast<int>(level);
  return value >= 0 && value < static_cast<int>(std::size(kLevelNames)) ? kLevelNames[value] : "?";
}

LogLevel log_level() {
  int level = chosen_level.load(std::memory_order_relaxed);
  if (level == kUnset) {
    // Racing first calls read the same environment and store the same value.
    level = static_cast<int>(level_from_environment());
    chosen_level.store(level, std::memory_order_relaxed);
  }
  return static_cast<LogLevel>(level);
}

void set_log_level(LogLevel level) {
  chosen_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

void set_log_prefix(const std::string& text) {
  const char* prefixed = std::getenv("BATON_LOG_PREFIXED");
  const std::lock_guard<std::mutex> lock(prefix_mutex());
  prefix() = prefixed && std::string(prefixed) == "1" ? std::string() : text;
}

void log(LogLevel level, const char* component, const std::string& message) {
  if (!log_enabled(level)) return;
  std::string line;
  {
    const std::lock_guard<std::mutex> lock(prefix_mutex());
    if (!prefix().empty()) line = "[" + prefix() + "] ";
  }
  line += log_level_name(level);
  line.append(level == LogLevel::kInfo || level == LogLevel::kWarn ? 2 : 1, ' ');
  line += component;
  line += ": ";
  line += message;
  line += '\n';
  // One write per line: lines from several threads (and, through a shared pipe, several
  // processes) never interleave. A log line that cannot be written is dropped.
  (void)write_fully(STDERR_FILENO, line);
}

}  // namespace baton

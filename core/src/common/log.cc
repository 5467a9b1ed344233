#include "baton/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

namespace baton {
namespace {

constexpr int kUnset = -1;
std::atomic<int> chosen_level{kUnset};

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
    (void)!::write(STDERR_FILENO, warning.data(), warning.size());
  }
  return level;
}

}  // namespace

bool parse_log_level(const std::string& text, LogLevel* level) {
  static const std::pair<const char*, LogLevel> kNames[] = {{"error", LogLevel::kError},
                                                            {"warn", LogLevel::kWarn},
                                                            {"info", LogLevel::kInfo},
                                                            {"debug", LogLevel::kDebug}};
  for (const auto& [name, value] : kNames) {
    if (text == name) {
      *level = value;
      return true;
    }
  }
  return false;
}

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "?";
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
  // processes) never interleave.
  const char* data = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t written = ::write(STDERR_FILENO, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    data += written;
    left -= static_cast<std::size_t>(written);
  }
}

}  // namespace baton

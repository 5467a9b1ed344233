// The error hierarchy every part of baton throws. Messages say what went wrong, where
// (rank, stage, step, microbatch, file:line of the YAML) and what to do about it.
#pragma once

#include <stdexcept>
#include <string>

#include "baton/export.h"

namespace baton {

// Base of everything baton throws on purpose.
class BATON_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  // Out of line (in libbaton_core) for this class and every subclass: an exception thrown
  // by a plugin may outlive the plugin's library, so its vtable must not live there.
  ~Error() override;
};

// A configuration file, override or plugin parameter is wrong.
class BATON_API ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
};

// A plugin could not be found, loaded, or is incompatible.
class BATON_API PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
};

// A plan (schedule output, CSV, action text) is malformed, invalid or cannot progress.
class BATON_API PlanError : public Error {
 public:
  using Error::Error;
  ~PlanError() override;
};

}  // namespace baton

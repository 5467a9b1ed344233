#include "model_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/files.h"

namespace baton_app {
namespace {

// The profile's format: raised whenever what a field means or how it is measured changes, so
// that a profile measured the older way is measured again rather than trusted (git log has
// each format's change).
constexpr const char* kFormat = "baton-profile-7";
// A profile is a few kilobytes per unit; a file far larger is not one.
constexpr std::uint64_t kLargestProfileBytes = 64ull << 20;

double number(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) {
    throw baton::ConfigError(where + ": '" + key + "' is missing or not a number");
  }
  const double value = found->get<double>();
  if (!std::isfinite(value) || value < 0) {
    throw baton::ConfigError(where + ": '" + key + "' is " + found->dump() +
                             "; a cost is a finite number, not negative");
  }
  return value;
}

// A count (a batch, a microbatch size): a whole number from 1 to 2^31 - 1.
int count(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number_integer() || found->get<std::int64_t>() < 1 ||
      found->get<std::int64_t>() > std::numeric_limits<int>::max()) {
    throw baton::ConfigError(where + ": '" + key + "' is " +
                             (found == object.end() ? std::string("missing") : found->dump()) +
                             "; a count is a whole number from 1 to 2147483647");
  }
  return static_cast<int>(found->get<std::int64_t>());
}

}  // namespace

const MicrobatchProfile& ModelProfile::at(int microbatch_size, const std::string& origin) const {
  std::string known;
  for (const MicrobatchProfile& size : sizes) {
    if (size.microbatch_size == microbatch_size) return size;
    known += (known.empty() ? "" : ", ") + std::to_string(size.microbatch_size);
  }
  throw baton::ConfigError(origin + ": the profile has no measurements for microbatches of " +
                           std::to_string(microbatch_size) + " samples (it has " +
                           (known.empty() ? "none" : known) + "); profile again with this batch");
}

std::string profile_to_json(const ModelProfile& profile) {
  nlohmann::json out;
  out["format"] = kFormat;
  out["model"] = profile.model;
  out["fingerprint"] = profile.fingerprint;
  out["batch_size"] = profile.batch_size;
  out["split_backward_factor"] = profile.split_backward_factor;
  out["transfer"] = {{"latency_s", profile.transfer.latency_s},
                     {"seconds_per_byte", profile.transfer.seconds_per_byte},
                     {"send_overhead_s", profile.transfer.send_overhead_s},
                     {"send_overhead_per_byte", profile.transfer.send_overhead_per_byte},
                     {"recv_overhead_s", profile.transfer.recv_overhead_s},
                     {"source", profile.transfer.source}};
  out["sizes"] = nlohmann::json::array();
  for (const MicrobatchProfile& size : profile.sizes) {
    nlohmann::json units = nlohmann::json::array();
    for (const UnitProfile& unit : size.units) {
      units.push_back({{"name", unit.name},
                       {"forward_s", unit.forward_s},
                       {"backward_s", unit.backward_s},
                       {"backward_input_s", unit.backward_input_s},
                       {"backward_weight_s", unit.backward_weight_s},
                       {"output_bytes", unit.output_bytes},
                       {"saved_bytes", unit.saved_bytes},
                       {"parameter_bytes", unit.parameter_bytes}});
    }
    out["sizes"].push_back({{"microbatch_size", size.microbatch_size},
                            {"input_bytes", size.input_bytes},
                            {"units", units}});
  }
  return out.dump(2) + "\n";
}

namespace {

ModelProfile profile_from_json_document(const std::string& text, const std::string& origin) {
  const nlohmann::json in = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded()) {
    throw baton::ConfigError(origin +
                             ": not a whole JSON document (truncated or damaged); "
                             "delete it and profile again");
  }
  if (!in.is_object() || in.value("format", "") != kFormat) {
    throw baton::ConfigError(origin + ": not a baton profile (expected \"format\": \"" +
                             std::string(kFormat) + "\")");
  }
  ModelProfile profile;
  profile.model = in.value("model", "");
  profile.fingerprint = in.value("fingerprint", "");
  profile.batch_size = count(in, "batch_size", origin);
  profile.split_backward_factor = number(in, "split_backward_factor", origin);
  const nlohmann::json transfer = in.value("transfer", nlohmann::json::object());
  profile.transfer.latency_s = number(transfer, "latency_s", origin + ": transfer");
  profile.transfer.seconds_per_byte = number(transfer, "seconds_per_byte", origin + ": transfer");
  profile.transfer.send_overhead_s = number(transfer, "send_overhead_s", origin + ": transfer");
  profile.transfer.send_overhead_per_byte =
      number(transfer, "send_overhead_per_byte", origin + ": transfer");
  profile.transfer.recv_overhead_s = number(transfer, "recv_overhead_s", origin + ": transfer");
  profile.transfer.source = transfer.value("source", "");
  const auto sizes = in.find("sizes");
  if (sizes == in.end() || !sizes->is_array() || sizes->empty()) {
    throw baton::ConfigError(origin + ": 'sizes' is missing or empty");
  }
  for (const nlohmann::json& size : *sizes) {
    MicrobatchProfile measured;
    const std::string where = origin + ": sizes[" + std::to_string(profile.sizes.size()) + "]";
    measured.microbatch_size = count(size, "microbatch_size", where);
    measured.input_bytes = number(size, "input_bytes", where);
    const auto units = size.find("units");
    if (units == size.end() || !units->is_array() || units->empty()) {
      throw baton::ConfigError(where + ": 'units' is missing or empty");
    }
    for (const nlohmann::json& unit : *units) {
      const std::string at = where + ".units[" + std::to_string(measured.units.size()) + "]";
      UnitProfile entry;
      entry.name = unit.value("name", "");
      entry.forward_s = number(unit, "forward_s", at);
      entry.backward_s = number(unit, "backward_s", at);
      entry.backward_input_s = number(unit, "backward_input_s", at);
      entry.backward_weight_s = number(unit, "backward_weight_s", at);
      entry.output_bytes = number(unit, "output_bytes", at);
      entry.saved_bytes = number(unit, "saved_bytes", at);
      entry.parameter_bytes = number(unit, "parameter_bytes", at);
      measured.units.push_back(entry);
    }
    if (!profile.sizes.empty() && measured.units.size() != profile.sizes.front().units.size()) {
      throw baton::ConfigError(where + ": " + std::to_string(measured.units.size()) +
                               " units, but sizes[0] has " +
                               std::to_string(profile.sizes.front().units.size()));
    }
    profile.sizes.push_back(std::move(measured));
  }
  return profile;
}

}  // namespace

ModelProfile profile_from_json(const std::string& text, const std::string& origin) {
  // A value of another JSON type than the one expected ("format": 7) is a damaged profile
  // like any other, never a raw json.exception.
  try {
    return profile_from_json_document(text, origin);
  } catch (const nlohmann::json::exception& error) {
    throw baton::ConfigError(origin + ": damaged (" + error.what() +
                             "); delete it and profile again");
  }
}

bool is_profile_file(const std::string& path) {
  // By its first bytes, not a whole parse: a profile cut short (a killed tune) is still one,
  // to be measured again and replaced.
  try {
    const baton::ReadableFile file = baton::ReadableFile::open(path, "profile");
    std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), 4096)), '\0');
    file.read_at(0, head.data(), head.size());
    const auto start = head.find_first_not_of(" \t\r\n");
    return start != std::string::npos && head[start] == '{' &&
           head.find("\"format\": \"baton-profile-") != std::string::npos;
  } catch (const baton::Error&) {
    return false;
  }
}

ModelProfile read_profile(const std::string& path, const std::string& expected_fingerprint) {
  std::string text;
  try {
    text = baton::read_file(path, "profile", kLargestProfileBytes);
  } catch (const baton::Error& error) {
    throw baton::ConfigError(error.what());
  }
  ModelProfile profile = profile_from_json(text, "profile '" + path + "'");
  if (!expected_fingerprint.empty() && profile.fingerprint != expected_fingerprint) {
    throw baton::ConfigError("profile '" + path +
                             "' was measured for another model, batch or "
                             "machine: it says \"" +
                             profile.fingerprint + "\", this run is \"" + expected_fingerprint +
                             "\"; delete it to profile again");
  }
  return profile;
}

void write_profile(const std::string& path, const ModelProfile& profile) {
  baton::write_file_atomically(path, profile_to_json(profile));
}

}  // namespace baton_app

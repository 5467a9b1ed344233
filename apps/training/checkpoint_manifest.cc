#include "checkpoint_manifest.h"

#include <cmath>

#include "baton/error.h"
#include "baton/files.h"

namespace baton_app {

nlohmann::ordered_json record_json(const RankRecord& record) {
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  for (const auto& [name, file] : record.files) {
    files[name] = {{"bytes", file.bytes}, {"checksum", file.checksum}};
  }
  nlohmann::ordered_json entries = nlohmann::ordered_json::object();
  for (const auto& [name, description] : record.entries) entries[name] = description;
  return {{"files", files}, {"entries", entries}};
}

RankRecord parse_record(const nlohmann::json& json, const std::string& where) {
  RankRecord record;
  if (!json.is_object() || !json.contains("files") || !json["files"].is_object() ||
      !json.contains("entries") || !json["entries"].is_object()) {
    throw baton::ConfigError(where + ": a rank's record needs \"files\" and \"entries\"");
  }
  for (const auto& item : json["files"].items()) {
    const auto& file = item.value();
    if (!file.is_object() || !file.contains("bytes") || !file["bytes"].is_number_integer() ||
        !file.contains("checksum") || !file["checksum"].is_string()) {
      throw baton::ConfigError(where + ": file " + item.key() + " has no size and checksum");
    }
    record.files[item.key()] = {file["bytes"].get<std::int64_t>(),
                                file["checksum"].get<std::string>()};
  }
  for (const auto& item : json["entries"].items()) {
    if (!item.value().is_string()) {
      throw baton::ConfigError(where + ": entry " + item.key() + " has no dtype and shape");
    }
    record.entries[item.key()] = item.value().get<std::string>();
  }
  return record;
}

nlohmann::ordered_json loss_scale_json(const LossScaleState& state) {
  return {{"scale", state.scale},
          {"growth_tracker", state.growth_tracker},
          {"skipped_steps", state.skipped_steps}};
}

namespace {

LossScaleState parse_loss_scale(const nlohmann::json& json, const std::string& where,
                                const std::string& remedy) {
  const auto count = [&json](const char* key) {
    const auto found = json.find(key);
    return found != json.end() && found->is_number_integer() ? found->get<std::int64_t>() : -1;
  };
  LossScaleState state;
  const auto scale = json.is_object() ? json.find("scale") : json.end();
  if (!json.is_object() || scale == json.end() || !scale->is_number() ||
      count("growth_tracker") < 0 || count("skipped_steps") < 0 || !(scale->get<double>() > 0) ||
      !std::isfinite(scale->get<double>())) {
    throw baton::ConfigError(where +
                             ": \"loss_scale\" needs a positive finite \"scale\" and counts "
                             "\"growth_tracker\" and \"skipped_steps\" (damaged?)" +
                             remedy);
  }
  state.scale = scale->get<double>();
  state.growth_tracker = count("growth_tracker");
  state.skipped_steps = count("skipped_steps");
  return state;
}

}  // namespace

Manifest parse_manifest(const std::string& text, const std::string& path) {
  const std::string remedy = "; remove that checkpoint folder to use the one before it";
  try {
    const nlohmann::json manifest = nlohmann::json::parse(text, nullptr, false);
    const auto format = manifest.is_object() ? manifest.find("format") : manifest.end();
    if (!manifest.is_object() || format == manifest.end() || !format->is_string() ||
        (*format != kManifestFormat && *format != kLegacyManifestFormat)) {
      throw baton::ConfigError("checkpoint manifest '" + path + "' is not a " + kManifestFormat +
                               " manifest (damaged or not written by baton)" + remedy);
    }
    const auto number = [&manifest](const char* key) -> long {
      const auto found = manifest.find(key);
      return found != manifest.end() && found->is_number_integer() ? found->get<long>() : -1;
    };
    const auto text_of = [&manifest](const char* key) {
      const auto found = manifest.find(key);
      return found != manifest.end() && found->is_string() ? found->get<std::string>()
                                                           : std::string();
    };
    Manifest read;
    read.format = *format == kManifestFormat ? 2 : 1;
    read.step = number("step");
    read.world_size = number("world_size");
    read.optimizer = text_of("optimizer");
    const auto run = manifest.find("run");
    if (run != manifest.end()) {
      if (!run->is_object() || !run->contains("id") || !(*run)["id"].is_string() ||
          !run->contains("name") || !(*run)["name"].is_string()) {
        throw baton::ConfigError("checkpoint manifest '" + path +
                                 "' names the run that wrote it without a name and an id "
                                 "(damaged?)" +
                                 remedy);
      }
      read.run_name = (*run)["name"].get<std::string>();
      read.run_id = (*run)["id"].get<std::string>();
    }
    if (read.step < 1 || read.world_size < 1 || read.world_size > 1 << 16) {
      throw baton::ConfigError("checkpoint manifest '" + path + "' names step " +
                               std::to_string(read.step) + " written by " +
                               std::to_string(read.world_size) + " ranks (damaged?)" + remedy);
    }
    const auto loss_scale = manifest.find("loss_scale");
    if (loss_scale != manifest.end()) {
      read.loss_scale = parse_loss_scale(*loss_scale, "checkpoint manifest '" + path + "'", remedy);
    }
    const auto by_name = manifest.find("state_by_name");
    read.state_by_name = by_name != manifest.end() && by_name->is_boolean() && by_name->get<bool>();
    const auto files = manifest.find("files");
    if (files == manifest.end() || !files->is_array()) {
      throw baton::ConfigError("checkpoint manifest '" + path +
                               "' has no list of files (damaged?)" + remedy);
    }
    for (const auto& file : *files) {
      if (!file.is_string()) {
        throw baton::ConfigError("checkpoint manifest '" + path +
                                 "' lists a file that is not a name (damaged?)" + remedy);
      }
      read.files.push_back(file.get<std::string>());
    }
    // Records present are checked whatever the format says: a format edited to 1 would
    // otherwise skip every checksum.
    if (manifest.contains("ranks")) read.format = 2;
    if (read.format == 2) {
      const auto ranks = manifest.find("ranks");
      if (ranks == manifest.end() || !ranks->is_array() ||
          static_cast<long>(ranks->size()) != read.world_size) {
        throw baton::ConfigError("checkpoint manifest '" + path + "' has no record for each of " +
                                 std::to_string(read.world_size) + " ranks (damaged?)" + remedy);
      }
      for (const auto& rank : *ranks) {
        read.ranks.push_back(parse_record(rank, "checkpoint manifest '" + path + "'"));
      }
    }
    return read;
  } catch (const nlohmann::json::exception& error) {
    throw baton::ConfigError("checkpoint manifest '" + path + "' is damaged (" + error.what() +
                             ")" + remedy);
  }
}

Manifest read_manifest(const std::string& path) {
  return parse_manifest(baton::read_file(path, "checkpoint manifest"), path);
}

}  // namespace baton_app

// Classes of bad input, walked over every key the schema has (`baton config defaults` lists
// them, plugins' parameters included), so a key added later is covered without touching this
// file: every integer key refuses values past 32 bits, and every file-valued key refuses what
// is missing or not a regular file (a FIFO would block, /dev/zero never end, a folder read as
// empty).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

struct SchemaKey {
  std::string path;     // "run.steps", "model.params.layers"
  std::string type;     // "int", "list of int", "file", "list of file", …
  std::string context;  // the --set that selects the plugin owning it, or empty
};

// The keys `baton config defaults` prints, each with the plugin selection its parameters
// need ("model.params for model 'mlp': …" -> --set model.name=mlp).
std::vector<SchemaKey> schema_keys() {
  const auto listing = baton_test::run_command_stdout(kBaton + " config defaults");
  std::vector<SchemaKey> keys;
  std::istringstream lines(listing.output);
  std::string context;
  for (std::string line; std::getline(lines, line);) {
    const auto params_for = line.find(".params for ");
    if (params_for != std::string::npos && line[0] != ' ') {
      const std::string section = line.substr(0, params_for);
      const auto quote = line.find('\'');
      const std::string name = line.substr(quote + 1, line.find('\'', quote + 1) - quote - 1);
      context = "--set " + section + ".name=" + name;
      continue;
    }
    if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') continue;
    const auto open = line.find(" (");
    if (open == std::string::npos) continue;
    SchemaKey key;
    key.path = line.substr(2, open - 2);
    const auto comma = line.find(',', open);
    key.type = line.substr(open + 2,
                           (comma == std::string::npos ? line.find(')', open) : comma) - open - 2);
    key.context = key.path.find(".params.") == std::string::npos ? "" : context;
    keys.push_back(key);
  }
  return keys;
}

std::vector<SchemaKey> keys_of_type(const std::vector<std::string>& types) {
  std::vector<SchemaKey> chosen;
  for (const auto& key : schema_keys()) {
    for (const auto& type : types) {
      if (key.type == type) chosen.push_back(key);
    }
  }
  return chosen;
}

baton_test::CommandResult config_check(const SchemaKey& key, const std::string& value) {
  return baton_test::run_command("timeout -k 5 30 " + kBaton + " config check --no-env " +
                                 key.context + " --set '" + key.path + "=" + value + "'");
}

TEST(EveryKey, TheSchemaListsItsIntegerAndFileKeys) {
  // The walk below is only as good as its listing: the keys issue 48 found cut or hung.
  std::vector<std::string> ints, files;
  for (const auto& key : keys_of_type({"int", "list of int"})) ints.push_back(key.path);
  for (const auto& key : keys_of_type({"file", "list of file"})) files.push_back(key.path);
  EXPECT_THAT(ints, testing::IsSupersetOf({"run.steps", "checkpoint.every", "trace.steps",
                                           "model.params.layers", "transport.params.device"}));
  EXPECT_THAT(files,
              testing::IsSupersetOf({"model.path", "model.stages", "data.inputs", "data.targets",
                                     "data.tokens", "eval.tokens", "schedule.params.path"}));
}

// 4294967297 was a checkpoint every step and 4294967296 no trace (cut to 32 bits).
TEST(EveryKey, EveryIntegerKeyRefusesValuesPast32BitsNamingTheKey) {
  const auto keys = keys_of_type({"int", "list of int"});
  ASSERT_GE(keys.size(), 20u);
  for (const auto& key : keys) {
    for (const std::string value : {"2147483648", "4294967297", "9223372036854775808"}) {
      const bool list = key.type == "list of int";
      const auto result = config_check(key, list ? "[" + value + "]" : value);
      EXPECT_NE(result.exit_code, 0) << key.path << "=" << value << "\n" << result.output;
      EXPECT_THAT(result.output, HasSubstr(key.path + " must be at most 2147483647"))
          << key.path << "=" << value;
    }
  }
}

TEST(EveryKey, EveryFileKeyRefusesWhatIsNotAReadableRegularFileNamingTheKey) {
  const std::string folder = ::testing::TempDir() + "/every-file-key";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const std::string fifo = folder + "/pipe.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> not_files = {
      {fifo, "is a FIFO (a named pipe)"},
      {folder, "is a directory"},
      {"/dev/zero", "is a character device"},
      {folder + "/missing.npy", "does not exist"},
  };
  const auto keys = keys_of_type({"file", "list of file"});
  ASSERT_GE(keys.size(), 8u);
  for (const auto& key : keys) {
    for (const auto& [path, what] : not_files) {
      const bool list = key.type == "list of file";
      const auto result = config_check(key, list ? "[" + path + "]" : path);
      EXPECT_NE(result.exit_code, 0) << key.path << "=" << path << "\n" << result.output;
      EXPECT_THAT(result.output, HasSubstr(key.path + ": '" + path + "' " + what))
          << key.path << "=" << path;
    }
  }
  std::filesystem::remove_all(folder);
}

}  // namespace

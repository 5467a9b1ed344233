// Every key's range and choices come from its declaration (KeySpec): this walks every
// declared key of every section — a key declared tomorrow is covered too — and tries a value
// just outside what it declares, and its default; then the front door that changes a loaded
// configuration (with_chosen_values, with_section_params) checks as the loader does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "baton/config.h"
#include "baton/error.h"
#include "training/config_sections.h"

namespace {

[[maybe_unused]] const bool kAppSections = (baton_app::add_app_config_sections(), true);

using testing::HasSubstr;

std::string refusal_of(const std::vector<std::string>& set) {
  baton::ConfigOverrides overrides;
  overrides.set = set;
  overrides.use_environment = false;
  try {
    baton::load_config_text("", "run.yaml", overrides);
  } catch (const baton::ConfigError& error) {
    return error.what();
  }
  return "";
}

std::string number(double value, bool whole) {
  if (whole) return std::to_string(static_cast<long long>(value));
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// Values just outside a key's declaration: below its low bound, past its high one, a word
// that is none of its choices.
std::vector<std::string> outside(const baton::KeySpec& key) {
  std::vector<std::string> values;
  if (!key.choices.empty()) values.push_back("nosuch-" + key.choices.front());
  const bool whole = key.type == baton::ParamType::kInt;
  if (key.low) {
    const double step = whole ? 1 : std::max(1e-9, std::abs(*key.low) * 1e-6);
    const double below = key.low_open ? *key.low : *key.low - step;
    // 0 turns an `off` key off, outside its range or not.
    if (!(below == 0 && !key.off_meaning.empty())) values.push_back(number(below, whole));
    if (!key.off_meaning.empty() && *key.low > 0) {
      values.push_back(number(*key.low / 2, whole));  // between off and the range
    }
  }
  if (key.high) values.push_back(number(*key.high * 2 + 1, whole));
  if (!whole && (key.low || key.high)) values.push_back("nan");
  return values;
}

TEST(DeclaredValues, EveryDeclaredRangeAndChoiceIsEnforcedWithTheDeclaredWords) {
  int walked = 0;
  for (const auto& section : baton::config_sections()) {
    for (const baton::KeySpec& key : section.keys) {
      const std::string path = std::string(section.name) + "." + key.name;
      for (const std::string& value : outside(key)) {
        // An integer past 2^31 - 1 is refused by the integer type itself, not the range.
        if (key.type == baton::ParamType::kInt && std::stod(value) > 2147483647.0) continue;
        const std::string message = refusal_of({path + "=" + value});
        EXPECT_THAT(message, HasSubstr("--set " + path + "=" + value + ": " + path + " must be "))
            << path << " took " << value;
        if (!key.choices.empty() || key.type == baton::ParamType::kFloat) {
          EXPECT_THAT(message, HasSubstr(key.range_text())) << path << " = " << value;
        }
        ++walked;
      }
      if (key.default_value != nullptr && key.default_value[0] != '\0') {
        EXPECT_EQ(refusal_of({path + "=" + key.default_value}), "")
            << path << " refused its default";
      }
    }
  }
  EXPECT_GE(walked, 40) << "the declarations lost their ranges";
}

TEST(DeclaredValues, DefaultsPrintTheValuesEachKeyTakes) {
  const std::string text = baton::format_config_defaults();
  for (const auto& section : baton::config_sections()) {
    for (const baton::KeySpec& key : section.keys) {
      if (key.range_text().empty()) continue;
      EXPECT_THAT(text, HasSubstr("values: " + key.range_text()))
          << section.name << "." << key.name;
    }
  }
  EXPECT_THAT(text, HasSubstr("values: one of cpu, cuda"));
  EXPECT_THAT(text, HasSubstr("values: 0 (off) or a number of seconds from 1 to 604800 (a week)"));
  EXPECT_THAT(text, HasSubstr("values: at least 1"));
}

TEST(DeclaredValues, ChoicesSuggestTheNearestDeclaredOne) {
  EXPECT_THAT(
      refusal_of({"world.device=cdua"}),
      HasSubstr("world.device must be one of cpu, cuda, got 'cdua' (did you mean 'cuda'?)"));
}

baton::RawValue chosen(std::string text) {
  baton::RawValue value;
  value.scalar = std::move(text);
  value.origin = value.key_origin = {"schedule: auto (choice.json)"};
  return value;
}

TEST(DeclaredValues, ChosenValuesAreTypedAndCheckedAsWrittenOnes) {
  baton::ConfigOverrides overrides;
  overrides.use_environment = false;
  const baton::Config config = baton::load_config_text("", "run.yaml", overrides);
  const baton::Config changed =
      baton::with_chosen_values(config, {{"schedule.microbatches", chosen("8")}});
  EXPECT_EQ(changed.section("schedule").get_int("microbatches"), 8);
  EXPECT_EQ(changed.section("schedule").at("microbatches").origin().description,
            "schedule: auto (choice.json)");
  EXPECT_EQ(config.section("schedule").get_int("microbatches"), 4) << "the original is unchanged";
  const auto refusal = [&](const std::string& key, const std::string& text) {
    try {
      baton::with_chosen_values(config, {{key, chosen(text)}});
    } catch (const baton::ConfigError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_THAT(refusal("schedule.microbatches", "0"),
              HasSubstr("schedule: auto (choice.json): schedule.microbatches must be at least 1"));
  EXPECT_THAT(refusal("schedule.microbatches", "eight"), HasSubstr("expected int"));
  EXPECT_THAT(refusal("schedule.nosuch", "1"), HasSubstr("no configuration key 'schedule.nosuch'"));
  // The whole configuration is checked again: 16 rows do not split into 3 microbatches.
  EXPECT_THAT(refusal("schedule.microbatches", "3"), HasSubstr("does not split into"));
}

TEST(DeclaredValues, SectionParamsAreCheckedAgainstTheirTable) {
  baton::ConfigOverrides overrides;
  overrides.use_environment = false;
  overrides.set = {"model.params.width=8"};
  const baton::Config config = baton::load_config_text("", "run.yaml", overrides);
  static const baton::ParamSpec table[] = {{"width", baton::ParamType::kInt, "4", "Width."}};
  const baton::Config checked =
      baton::with_section_params(config, "model", table, 1, "model 'test'");
  EXPECT_EQ(checked.plugin_params("model").get_int("width"), 8);
  static const baton::ParamSpec other[] = {{"depth", baton::ParamType::kInt, "4", "Depth."}};
  try {
    baton::with_section_params(config, "model", other, 1, "model 'test'");
    ADD_FAILURE() << "an unknown model parameter was taken";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("width"));
  }
}

}  // namespace

// What `baton plugins` and `baton config defaults` show for each built-in schedule: the name it
// is loaded by, a one-line description, and only the parameters that are real.
#include <gtest/gtest.h>

#include <string>

#include "schedule_fixture.h"

namespace baton {
namespace testing {
namespace {

TEST(ScheduleDescriptors, NameDescriptionAndParametersAreWhatUsersSee) {
  std::vector<std::string> names;
  for (const ScheduleSpec& spec : built_in_schedules()) names.push_back(spec.name);
  names.push_back("csv");
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::shared_ptr<LoadedPlugin> plugin = PluginLoader().load(PluginKind::kSchedule, name);
    const PluginDescriptor& descriptor = plugin->descriptor();
    EXPECT_EQ(plugin->name(), name);
    EXPECT_EQ(plugin->kind(), PluginKind::kSchedule);
    EXPECT_TRUE(plugin->viability().viable);
    const std::string description = descriptor.description;
    EXPECT_GT(description.size(), 20u);
    EXPECT_EQ(description.find('\n'), std::string::npos);
    if (name != "csv") {
      EXPECT_EQ(descriptor.num_params, 0u);
      continue;
    }
    ASSERT_EQ(descriptor.num_params, 1u);
    EXPECT_STREQ(descriptor.params[0].name, "path");
    EXPECT_EQ(descriptor.params[0].type, ParamType::kFile);
    EXPECT_EQ(descriptor.params[0].default_value, nullptr);  // required
  }
}

}  // namespace
}  // namespace testing
}  // namespace baton

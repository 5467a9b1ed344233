// A plugin in two files (baton/plugin_implementation.h): this descriptor, and the
// implementation library its factory loads from the same folder. Built twice: as
// test-two-files (its implementation is there) and as test-lost-implementation (the file it
// names is not).
#include "baton/plugin.h"
#include "baton/plugin_implementation.h"

namespace {

const char kInThisLibrary = 0;

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  return baton::create_from_implementation(&kInThisLibrary, IMPLEMENTATION_FILE, params);
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, PLUGIN_NAME, "1.0.0",
             "A schedule whose factory is in a second library", nullptr, nullptr, &create)

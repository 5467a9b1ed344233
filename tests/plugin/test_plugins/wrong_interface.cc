// Declares the schedule kind but its factory returns an object that is no Schedule.
#include "baton/plugin.h"

namespace {

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<baton::PluginObject>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, "test-wrong-interface", "1.0.0",
             "Returns the wrong object", nullptr, nullptr, &create)

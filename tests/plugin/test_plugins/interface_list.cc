// Schedule plugins with an interface list (ABI 2.1) the loader must refuse, one per build
// (LIST, set by tests/plugin/CMakeLists.txt): an interface twice, one without a version, and
// a list that leaves out the kind's own interface.
#include "descriptor_fields.h"

namespace {

#if LIST == 1
const baton::PluginInterface kList[] = {baton::kScheduleInterface, {"baton.schedule", 2}};
#elif LIST == 2
const baton::PluginInterface kList[] = {baton::kScheduleInterface, {"example.extra", 0}};
#else
const baton::PluginInterface kList[] = {baton::kAllReduceInterface};
#endif

}  // namespace

TEST_PLUGIN_ENTRY(PLUGIN_NAME, d.interfaces = kList;
                  d.num_interfaces = baton::interface_table_size(kList))

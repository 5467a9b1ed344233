// Checks the warmup_1f1b plugin without any ranks: loads it like the runtime does, then
// compiles (validates and lowers) and simulates its plan for every shape of a grid and
// every warm-up depth tried. Exit code 0 when every plan is sound.
#include <iostream>

#include "baton/plugin_loader.h"
#include "baton/testing/schedule_grid.h"

int main() {
  try {
    auto plugin = baton::PluginLoader().load(baton::PluginKind::kSchedule, PLUGIN_PATH);
    bool ok = true;
    for (const char* extra : {"0", "1", "3"}) {
      auto schedule = plugin->create_as<baton::Schedule>(
          baton::testing::plugin_params(*plugin, {{"extra_warmup", extra}}));
      const auto report = baton::testing::check_schedule_grid(
          *schedule, std::string("warmup_1f1b(extra_warmup=") + extra + ")", {1, 2, 3, 4}, {1},
          {1, 2, 4, 8});
      std::cout << report.text;
      ok = ok && report.ok();
    }
    std::cout << (ok ? "every plan is sound\n" : "some plans are wrong (see above)\n");
    return ok ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "check_warmup_1f1b: " << error.what() << "\n";
    return 2;
  }
}

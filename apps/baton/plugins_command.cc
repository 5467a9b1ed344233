// `baton plugins`: every plugin file found on the search path, whether it loaded, and
// whether it can run on this machine, and the interfaces it lists (with their versions).
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/plugin_loader.h"
#include "commands.h"

namespace baton_app {
namespace {

struct Row {
  std::string kind, name, version, viable, path, note;
  std::string all_reduce = "-";         // transports: yes/no (world.data_parallel needs yes)
  std::vector<std::string> interfaces;  // "baton.transport 2"
};

std::vector<Row> collect_rows(const baton::PluginLoader& loader) {
  std::vector<Row> rows;
  for (const auto& listing : loader.discover()) {
    Row row;
    row.path = listing.path;
    if (!listing.loaded) {
      row.kind = "-";
      row.name = "-";
      row.version = "-";
      row.viable = "refused";
      row.note = listing.error;
    } else {
      const auto& descriptor = listing.plugin->descriptor();
      const baton::Viability viability = listing.plugin->viability();
      row.kind = baton::plugin_kind_name(descriptor.kind);
      row.name = descriptor.name;
      row.version = descriptor.version ? descriptor.version : "?";
      row.viable = viability.viable ? "yes" : "no";
      if (descriptor.kind == baton::PluginKind::kTransport) {
        row.all_reduce = baton::declares(descriptor, baton::kAllReduceInterface) ? "yes" : "no";
      }
      for (const baton::PluginInterface& interface : baton::plugin_interfaces(descriptor)) {
        row.interfaces.push_back(std::string(interface.name) + " " +
                                 std::to_string(interface.version));
      }
      row.note = viability.viable ? (descriptor.description ? descriptor.description : "")
                                  : viability.reason;
    }
    rows.push_back(row);
  }
  return rows;
}

void print_table(const std::vector<Row>& rows, const baton::PluginLoader& loader) {
  std::size_t name_width = 4, version_width = 7;
  for (const auto& row : rows) {
    name_width = std::max(name_width, row.name.size());
    version_width = std::max(version_width, row.version.size());
  }
  std::cout << std::left << std::setw(10) << "KIND"
            << "  " << std::setw(name_width) << "NAME"
            << "  " << std::setw(version_width) << "VERSION"
            << "  " << std::setw(7) << "VIABLE"
            << "  " << std::setw(10) << "ALL-REDUCE"
            << "  PATH\n";
  for (const auto& row : rows) {
    std::cout << std::setw(10) << row.kind << "  " << std::setw(name_width) << row.name << "  "
              << std::setw(version_width) << row.version << "  " << std::setw(7) << row.viable
              << "  " << std::setw(10) << row.all_reduce << "  " << row.path << "\n";
    if (!row.note.empty()) std::cout << std::string(12, ' ') << row.note << "\n";
    if (!row.interfaces.empty()) {
      std::string listed;
      for (const auto& interface : row.interfaces)
        listed += (listed.empty() ? "" : ", ") + interface;
      std::cout << std::string(12, ' ') << "implements " << listed << "\n";
    }
  }
  if (rows.empty()) std::cout << "(no plugins found)\n";
  std::cout << "\nsearched, in order:\n";
  for (const auto& dir : loader.search_dirs()) std::cout << "  " << dir << "\n";
}

void print_json(const std::vector<Row>& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Row& row : rows) {
    list.push_back({{"kind", row.kind},
                    {"name", row.name},
                    {"version", row.version},
                    {"status", row.viable},
                    {"all_reduce", row.all_reduce},
                    {"interfaces", row.interfaces},
                    {"path", row.path},
                    {"note", row.note}});
  }
  std::cout << list.dump(2) << "\n";
}

}  // namespace

void add_plugins_command(CommandLine& command_line) {
  struct Options {
    std::string format = "table";
    std::vector<std::string> plugin_path;
  };
  auto options = std::make_shared<Options>();
  CLI::App& plugins = command_line.add_command(
      command_line.root(), "plugins",
      "list every plugin found: kind, name, version, whether it can run here, and where it is",
      [options] {
        const baton::PluginLoader loader(options->plugin_path);
        const auto rows = collect_rows(loader);
        if (options->format == "json") {
          print_json(rows);
        } else {
          print_table(rows, loader);
        }
        return 0;
      });
  plugins.group("Commands");
  add_format_option(plugins, options->format, {"table", "json"},
                    "table, or json (one object per plugin)");
  add_plugin_path_option(plugins, options->plugin_path);
}

}  // namespace baton_app

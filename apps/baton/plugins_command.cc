// `baton plugins`: every plugin file found on the search path, whether it loaded, and
// whether it can run on this machine.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "baton/plan/format.h"
#include "baton/plugin_loader.h"
#include "cli_args.h"
#include "commands.h"

namespace baton_app {
namespace {

struct Row {
  std::string kind, name, version, viable, path, note;
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
            << "  PATH\n";
  for (const auto& row : rows) {
    std::cout << std::setw(10) << row.kind << "  " << std::setw(name_width) << row.name << "  "
              << std::setw(version_width) << row.version << "  " << std::setw(7) << row.viable
              << "  " << row.path << "\n";
    if (!row.note.empty()) std::cout << std::string(12, ' ') << row.note << "\n";
  }
  if (rows.empty()) std::cout << "(no plugins found)\n";
  std::cout << "\nsearched, in order:\n";
  for (const auto& dir : loader.search_dirs()) std::cout << "  " << dir << "\n";
}

void print_json(const std::vector<Row>& rows) {
  std::cout << "[";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    std::cout << (i ? ",\n " : "\n ") << "{\"kind\": " << baton::json_quote(row.kind)
              << ", \"name\": " << baton::json_quote(row.name)
              << ", \"version\": " << baton::json_quote(row.version)
              << ", \"status\": " << baton::json_quote(row.viable)
              << ", \"path\": " << baton::json_quote(row.path)
              << ", \"note\": " << baton::json_quote(row.note) << "}";
  }
  std::cout << "\n]\n";
}

}  // namespace

int run_plugins_command(const std::vector<std::string>& args) {
  CliArgs cli(args, {"format", "plugin-path"}, {});
  if (!cli.positional().empty()) {
    throw UsageError("baton plugins takes no arguments, got '" + cli.positional()[0] + "'");
  }
  baton::PluginLoader loader(cli.values("plugin-path"));
  const auto rows = collect_rows(loader);
  const std::string format = cli.value("format", "table");
  if (format == "table") {
    print_table(rows, loader);
  } else if (format == "json") {
    print_json(rows);
  } else {
    throw UsageError("--format must be table or json, got '" + format + "'");
  }
  return 0;
}

}  // namespace baton_app

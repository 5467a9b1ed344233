#include "transport_group.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "baton/config.h"
#include "baton/stores.h"

namespace baton_test {

namespace {

std::string make_temp_folder() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/baton-plugin-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp(" + pattern + "): " + std::strerror(errno));
  }
  return pattern;
}

}  // namespace

TransportGroup::~TransportGroup() {
  std::vector<std::thread> teardown;
  for (auto& transport : ranks) {
    teardown.emplace_back([&transport] { transport.reset(); });
  }
  for (std::thread& thread : teardown) thread.join();
  ranks.clear();
  plugin.reset();
  std::error_code ignored;
  if (!folder.empty()) std::filesystem::remove_all(folder, ignored);
}

baton::ParamValues plugin_params(const baton::LoadedPlugin& plugin,
                                 const std::map<std::string, std::string>& overrides) {
  baton::RawParams raw;
  raw.key_path = "transport.params";
  raw.origin = baton::ValueOrigin{"test"};
  for (const auto& entry : overrides) {
    baton::RawValue value;
    value.scalar = entry.second;
    value.origin = baton::ValueOrigin{"test"};
    value.key_origin = value.origin;
    raw.entries.emplace_back(entry.first, value);
  }
  const baton::PluginDescriptor& descriptor = plugin.descriptor();
  return baton::resolve_params(raw, descriptor.params, descriptor.num_params,
                               "transport plugin '" + plugin.name() + "'");
}

std::unique_ptr<TransportGroup> connect_group(const std::string& plugin_name, int world_size,
                                              const std::map<std::string, std::string>& params,
                                              std::chrono::milliseconds timeout) {
  auto group = std::make_unique<TransportGroup>();
  group->plugin = baton::PluginLoader().load(baton::PluginKind::kTransport, plugin_name);
  const baton::ParamValues values = plugin_params(*group->plugin, params);
  for (int rank = 0; rank < world_size; ++rank) {
    group->ranks.push_back(group->plugin->create_as<baton::Transport>(values));
  }
  group->folder = make_temp_folder();
  auto store = std::make_shared<baton::FileStore>(group->folder);

  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(world_size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        baton::TransportContext context;
        context.rank = rank;
        context.world_size = world_size;
        context.store = std::make_shared<baton::PrefixStore>("transport", store);
        context.timeout = timeout;
        (*group)[rank].connect(context);
      } catch (...) {
        errors[static_cast<std::size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return group;
}

ScopedEnvironment::ScopedEnvironment(std::string name, const std::optional<std::string>& value)
    : name_(std::move(name)) {
  if (const char* previous = std::getenv(name_.c_str())) previous_ = previous;
  if (value) {
    ::setenv(name_.c_str(), value->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

ScopedEnvironment::~ScopedEnvironment() {
  if (previous_) {
    ::setenv(name_.c_str(), previous_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

}  // namespace baton_test

#include "baton/plugin_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <set>

#include "abi_version.h"
#include "baton/error.h"
#include "baton/suggest.h"
#include "elf_exports.h"
#include "search_dirs.h"

namespace baton {
namespace {

bool file_exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool looks_like_path(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos ||
         (name_or_path.size() > 3 && name_or_path.compare(name_or_path.size() - 3, 3, ".so") == 0);
}

std::string describe(const PluginDescriptor& descriptor, const std::string& path) {
  return std::string(plugin_kind_name(descriptor.kind)) + " plugin '" +
         (descriptor.name ? descriptor.name : "?") + "' (" + path + ")";
}

// An interface list (ABI 2.1) names each interface once, at a version of at least 1, and
// holds the kind's own interface: the core finds what it asks for by name.
void check_interface_list(const PluginDescriptor& descriptor, const std::string& path) {
  if (descriptor.struct_size < offsetof(PluginDescriptor, num_interfaces) + sizeof(std::size_t) ||
      descriptor.interfaces == nullptr) {
    return;  // none: the kind's interface at version 1 (plugin_interfaces)
  }
  constexpr std::size_t kMaxInterfaces = 64;
  if (descriptor.num_interfaces == 0 || descriptor.num_interfaces > kMaxInterfaces) {
    throw PluginError(describe(descriptor, path) + " lists " +
                      std::to_string(descriptor.num_interfaces) +
                      " interfaces; a plugin lists between 1 and " +
                      std::to_string(kMaxInterfaces) + ", its kind's among them");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < descriptor.num_interfaces; ++i) {
    const PluginInterface& interface = descriptor.interfaces[i];
    if (interface.name == nullptr || interface.name[0] == '\0' || interface.version == 0) {
      throw PluginError(describe(descriptor, path) + ": interface " + std::to_string(i) +
                        " of its list has no name or version 0; list each as "
                        "baton::kTransportInterface does (a name and a version from 1)");
    }
    if (!names.insert(interface.name).second) {
      throw PluginError(describe(descriptor, path) + " lists interface '" + interface.name +
                        "' twice; list each once, at the highest version it implements");
    }
  }
  const char* own = kind_interface_name(descriptor.kind);
  if (names.count(own) == 0) {
    throw PluginError(describe(descriptor, path) + " does not list its kind's interface '" + own +
                      "' (" + plugin_kind_name(descriptor.kind) +
                      " plugins implement it); add it to the interface list");
  }
}

// Reads the descriptor and refuses anything this core cannot use.
const PluginDescriptor* checked_descriptor(void* handle, const std::string& path,
                                           const PluginKind* expected_kind) {
  dlerror();
  void* symbol = dlsym(handle, BATON_PLUGIN_ENTRY_POINT_NAME);
  if (symbol == nullptr) {
    const char* text = dlerror();
    throw PluginError(path + ": not a baton plugin: it does not export '" +
                      BATON_PLUGIN_ENTRY_POINT_NAME + "' (" + (text ? text : "no error text") +
                      "); declare the entry point with BATON_PLUGIN(...) from <baton/plugin.h>");
  }
  using EntryPoint = const PluginDescriptor* (*)();
  const PluginDescriptor* descriptor = reinterpret_cast<EntryPoint>(symbol)();
  if (descriptor == nullptr) {
    throw PluginError(path + ": " + BATON_PLUGIN_ENTRY_POINT_NAME + "() returned no descriptor");
  }
  const std::string built =
      plugin_internal::abi_version_text(descriptor->abi_major, descriptor->abi_minor);
  if (descriptor->abi_major != BATON_ABI_MAJOR) {
    throw PluginError(path + ": plugin was built for baton ABI " + built + ", this baton is ABI " +
                      plugin_internal::core_abi_version_text() +
                      "; rebuild the plugin against this baton's SDK");
  }
  // A newer minor appended fields to structs the core hands the plugin (TransportContext's
  // device in 2.2): the plugin would read past this core's.
  if (descriptor->abi_minor > BATON_ABI_MINOR) {
    throw PluginError(path + ": plugin was built for baton ABI " + built +
                      ", newer than this baton's ABI " + plugin_internal::core_abi_version_text() +
                      " (it may read what this baton does not pass); upgrade baton, or rebuild "
                      "the plugin against this baton's SDK");
  }
  // The first descriptor (ABI 1.0's) ended before `capabilities`, which 1.1 appended; one
  // that ends there still loads (with no capabilities), and fields a later minor appends are
  // read only when the plugin's descriptor holds them.
  constexpr std::size_t kFirstMinorSize = offsetof(PluginDescriptor, capabilities);
  if (descriptor->struct_size < kFirstMinorSize) {
    throw PluginError(path + ": descriptor is " + std::to_string(descriptor->struct_size) +
                      " bytes, ABI " + std::to_string(BATON_ABI_MAJOR) + " needs at least " +
                      std::to_string(kFirstMinorSize) +
                      "; rebuild the plugin against this baton's SDK");
  }
  if (descriptor->name == nullptr || descriptor->name[0] == '\0' || descriptor->create == nullptr) {
    throw PluginError(path + ": descriptor has no name or no factory");
  }
  if (expected_kind != nullptr && descriptor->kind != *expected_kind) {
    throw PluginError(path + ": '" + descriptor->name + "' is a " +
                      plugin_kind_name(descriptor->kind) + " plugin, expected a " +
                      plugin_kind_name(*expected_kind) + " plugin");
  }
  check_interface_list(*descriptor, path);
  // Only plugins that exchange tensors depend on LibTorch's layout; a schedule plugin is
  // built without it (BATON_TORCH_VERSION: the LibTorch baton was built with, from CMake).
  if (descriptor->kind != PluginKind::kSchedule) {
    const std::string plugin_torch =
        descriptor->torch_version ? descriptor->torch_version : "no LibTorch";
    if (plugin_torch != BATON_TORCH_VERSION) {
      throw PluginError(describe(*descriptor, path) + " was built against " +
                        (descriptor->torch_version ? "LibTorch " : "") + plugin_torch +
                        ", this baton uses LibTorch " + BATON_TORCH_VERSION +
                        "; rebuild the plugin against LibTorch " + BATON_TORCH_VERSION);
    }
  }
  if (descriptor->cxx11_abi != BATON_CXX11_ABI) {
    throw PluginError(describe(*descriptor, path) + " was built with _GLIBCXX_USE_CXX11_ABI=" +
                      std::to_string(descriptor->cxx11_abi) + ", this baton with " +
                      std::to_string(BATON_CXX11_ABI) +
                      "; rebuild the plugin with the same C++ ABI (use LibTorch's "
                      "TORCH_CXX_FLAGS)");
  }
  return descriptor;
}

}  // namespace

LoadedPlugin::LoadedPlugin(std::shared_ptr<void> handle, const PluginDescriptor* descriptor,
                           std::string path)
    : handle_(std::move(handle)), descriptor_(descriptor), path_(std::move(path)) {}

Viability LoadedPlugin::viability() const {
  if (descriptor_->viability == nullptr) return Viability::yes();
  try {
    return descriptor_->viability();
  } catch (const std::exception& error) {
    return Viability::no(std::string("viability check failed: ") + error.what());
  }
}

PluginPtr<PluginObject> LoadedPlugin::create(const ParamValues& params) const {
  std::unique_ptr<PluginObject> object;
  try {
    object = descriptor_->create(params);
  } catch (const std::exception& error) {
    throw PluginError(describe(*descriptor_, path_) + " failed to start: " + error.what());
  } catch (...) {
    throw PluginError(describe(*descriptor_, path_) +
                      " failed to start: its factory threw a non-standard exception");
  }
  if (!object) {
    throw PluginError(describe(*descriptor_, path_) +
                      " failed to start: its factory returned null");
  }
  return PluginPtr<PluginObject>(object.release(), KeepsPluginLoaded(shared_from_this()));
}

void LoadedPlugin::throw_wrong_interface() const {
  throw PluginError(describe(*descriptor_, path_) +
                    ": its factory returned an object that does not implement the " +
                    plugin_kind_name(descriptor_->kind) + " interface");
}

std::string plugin_file_name(PluginKind kind, const std::string& name) {
  return std::string("libbaton-") + plugin_kind_name(kind) + "-" + name + ".so";
}

std::shared_ptr<LoadedPlugin> load_plugin_file(const std::string& path,
                                               const PluginKind* expected_kind) {
  if (!file_exists(path)) throw PluginError(path + ": no such file");
  // Read from the file, not after loading it: a library that is not a plugin is refused
  // before its static constructors run (a YAML may name any file).
  const plugin_internal::ElfExport entry =
      plugin_internal::elf_exports(path, BATON_PLUGIN_ENTRY_POINT_NAME);
  if (entry == plugin_internal::ElfExport::kUnreadable) {
    // dlopen would run the file's constructors before anything could be checked.
    throw PluginError(path +
                      ": not loaded: baton cannot read its table of exported symbols (it is not "
                      "a 64-bit ELF shared library with the section headers a compiler writes), "
                      "so it cannot check that this is a baton plugin before the file's code "
                      "runs; give a plugin built against baton's SDK");
  }
  if (entry == plugin_internal::ElfExport::kAbsent) {
    throw PluginError(path + ": not a baton plugin: it does not export '" +
                      BATON_PLUGIN_ENTRY_POINT_NAME +
                      "' (read from the file; it was not loaded); declare the entry point with "
                      "BATON_PLUGIN(...) from <baton/plugin.h>");
  }
  dlerror();
  void* raw_handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw_handle == nullptr) {
    const char* text = dlerror();
    throw PluginError(path + ": failed to load: " + (text ? text : "unknown dlopen error"));
  }
  std::shared_ptr<void> handle(raw_handle, [](void* h) { dlclose(h); });
  const PluginDescriptor* descriptor = checked_descriptor(raw_handle, path, expected_kind);
  return std::make_shared<LoadedPlugin>(std::move(handle), descriptor, path);
}

PluginLoader::PluginLoader(std::vector<std::string> config_paths) {
  std::set<std::string> seen;
  auto add = [&](const std::string& dir) {
    if (!dir.empty() && seen.insert(dir).second) search_dirs_.push_back(dir);
  };
  for (const auto& dir : config_paths) add(dir);
  for (const auto& dir : plugin_internal::default_search_dirs()) add(dir);
}

std::shared_ptr<LoadedPlugin> PluginLoader::load(PluginKind kind,
                                                 const std::string& name_or_path) const {
  const std::string kind_name = plugin_kind_name(kind);
  if (looks_like_path(name_or_path)) {
    try {
      return load_plugin_file(name_or_path, &kind);
    } catch (const PluginError& error) {
      throw PluginError("cannot load " + kind_name + " plugin from path: " + error.what());
    }
  }
  std::string attempts;
  for (const auto& dir : search_dirs_) {
    const std::string path = dir + "/" + plugin_file_name(kind, name_or_path);
    if (!file_exists(path)) {
      attempts += "\n  " + path + " (missing)";
      continue;
    }
    try {
      auto plugin = load_plugin_file(path, &kind);
      if (plugin->name() != name_or_path) {
        throw PluginError(path + ": declares the name '" + plugin->name() + "', expected '" +
                          name_or_path + "'");
      }
      return plugin;
    } catch (const PluginError& error) {
      attempts += "\n  " + path + " (failed: " + error.what() + ")";
    }
  }
  std::vector<std::string> found_names;
  std::string found;
  for (const auto& listing : discover()) {
    if (!listing.loaded || listing.plugin->kind() != kind) continue;
    found_names.push_back(listing.plugin->name());
    found += "\n  " + listing.plugin->name() + " (" + listing.path + ")";
  }
  throw PluginError("cannot load " + kind_name + " plugin '" + name_or_path + "'" +
                    did_you_mean(name_or_path, found_names) + "; tried:" + attempts + "\n" +
                    kind_name + " plugins found:" + (found.empty() ? " none" : found) +
                    "\nAdd folders with BATON_PLUGIN_PATH or plugins.path in the YAML, or give "
                    "the path of the .so file.");
}

std::vector<PluginListing> PluginLoader::discover() const {
  std::vector<PluginListing> listings;
  std::set<std::string> seen_names;
  for (const auto& dir : search_dirs_) {
    DIR* folder = opendir(dir.c_str());
    if (folder == nullptr) continue;
    std::vector<std::string> files;
    while (const dirent* entry = readdir(folder)) {
      const std::string file = entry->d_name;
      if (file.rfind("libbaton-", 0) == 0 && file.size() > 3 &&
          file.compare(file.size() - 3, 3, ".so") == 0) {
        files.push_back(file);
      }
    }
    closedir(folder);
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!seen_names.insert(file).second) continue;  // an earlier folder wins
      PluginListing listing;
      listing.path = dir + "/" + file;
      try {
        auto plugin = load_plugin_file(listing.path, nullptr);
        // Loading by name looks for the file name: a file whose descriptor disagrees with
        // its name could never be selected, so it is listed as refused.
        const std::string expected = plugin_file_name(plugin->kind(), plugin->name());
        if (expected != file) {
          throw PluginError(listing.path + ": declares " + plugin_kind_name(plugin->kind()) +
                            " plugin '" + plugin->name() + "', whose file should be named " +
                            expected);
        }
        listing.plugin = std::move(plugin);
        listing.loaded = true;
      } catch (const PluginError& error) {
        listing.error = error.what();
      }
      listings.push_back(std::move(listing));
    }
  }
  return listings;
}

}  // namespace baton

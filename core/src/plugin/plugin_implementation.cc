#include "baton/plugin_implementation.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "baton/error.h"

namespace baton {
namespace {

std::string folder_of_library_containing(const void* anchor) {
  Dl_info info{};
  if (dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) {
    throw PluginError("cannot tell which file a plugin was loaded from (dladdr failed)");
  }
  const std::string path = info.dli_fname;
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

ImplementationFactory load_factory(const std::string& path) {
  // Loaded once per path and never closed: the objects an implementation makes (and their
  // vtables) may outlive any one plugin handle.
  static std::mutex mutex;
  static std::map<std::string, ImplementationFactory> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = loaded.find(path);
  if (found != loaded.end()) return found->second;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* text = dlerror();
    throw PluginError(path + ": the plugin's implementation failed to load: " +
                      (text ? text : "unknown dlopen error") +
                      "; reinstall the plugin (its two files belong in one folder)");
  }
  using EntryPoint = ImplementationFactory (*)();
  auto entry =
      reinterpret_cast<EntryPoint>(dlsym(handle, BATON_PLUGIN_IMPLEMENTATION_ENTRY_POINT_NAME));
  ImplementationFactory factory = entry != nullptr ? entry() : nullptr;
  if (factory == nullptr) {
    throw PluginError(path + ": not a plugin implementation: it exports no '" +
                      BATON_PLUGIN_IMPLEMENTATION_ENTRY_POINT_NAME +
                      "' (declare it with BATON_PLUGIN_IMPLEMENTATION(...))");
  }
  loaded.emplace(path, factory);
  return factory;
}

}  // namespace

std::unique_ptr<PluginObject> create_from_implementation(const void* anchor,
                                                         const std::string& library_file,
                                                         const ParamValues& params) {
  const std::string path = folder_of_library_containing(anchor) + "/" + library_file;
  return load_factory(path)(params);
}

}  // namespace baton

#include "baton/plugin_implementation.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "abi_version.h"
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

// Refuses an implementation built for another core than this one (its stamp).
void check_stamp(void* handle, const std::string& path) {
  using StampEntry = const ImplementationStamp* (*)();
  auto entry = reinterpret_cast<StampEntry>(dlsym(handle, BATON_PLUGIN_IMPLEMENTATION_STAMP_NAME));
  const ImplementationStamp* stamp = entry != nullptr ? entry() : nullptr;
  const std::string core = plugin_internal::core_abi_version_text();
  const std::string rebuild = "; rebuild the plugin (both its files) against this baton's SDK";
  if (stamp == nullptr) {
    throw PluginError(path +
                      ": the plugin's implementation carries no version stamp (built "
                      "before ABI 2.2, or without BATON_PLUGIN_IMPLEMENTATION), this "
                      "baton is ABI " +
                      core + rebuild);
  }
  const std::string built = plugin_internal::abi_version_text(stamp->abi_major, stamp->abi_minor);
  if (stamp->abi_major != BATON_ABI_MAJOR || stamp->abi_minor > BATON_ABI_MINOR) {
    throw PluginError(path + ": the plugin's implementation was built for baton ABI " + built +
                      ", this baton is ABI " + core + rebuild);
  }
  if (stamp->cxx11_abi != BATON_CXX11_ABI) {
    throw PluginError(path +
                      ": the plugin's implementation was built with "
                      "_GLIBCXX_USE_CXX11_ABI=" +
                      std::to_string(stamp->cxx11_abi) + ", this baton with " +
                      std::to_string(BATON_CXX11_ABI) + rebuild);
  }
  if (stamp->torch_version != nullptr && std::string(stamp->torch_version) != BATON_TORCH_VERSION) {
    throw PluginError(path + ": the plugin's implementation was built against LibTorch " +
                      stamp->torch_version + ", this baton uses LibTorch " + BATON_TORCH_VERSION +
                      rebuild);
  }
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
  try {
    check_stamp(handle, path);
  } catch (...) {
    dlclose(handle);
    throw;
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

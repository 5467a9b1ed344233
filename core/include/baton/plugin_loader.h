// Finding, loading and checking plugins.
//
// A plugin is named (`gloo`, looked up as libbaton-<kind>-<name>.so) or given by path. The
// search order is: folders from the YAML (plugins.path), BATON_PLUGIN_PATH (colon
// separated), next to the executable and <exe>/../lib/baton (the build tree and an install
// tree), next to libbaton_core (<core dir>/baton), and the install folder.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/plugin.h"

namespace baton {

class LoadedPlugin;

// The deleter of an object a plugin made: deletes the object, then lets go of the plugin, so
// the library's code (the object's destructor, its vtable) outlives the object however the
// caller orders its variables. A PluginPtr<Derived> converts to PluginPtr<Base> and to a
// std::shared_ptr, which keep the library the same way.
class BATON_API KeepsPluginLoaded {
 public:
  KeepsPluginLoaded() = default;
  explicit KeepsPluginLoaded(std::shared_ptr<const LoadedPlugin> plugin)
      : plugin_(std::move(plugin)) {}
  // Lets go of the plugin at once, not when the holder dies: a PluginPtr that was reset()
  // holds no library.
  template <typename Object>
  void operator()(Object* object) const {
    delete object;
    plugin_.reset();
  }

 private:
  mutable std::shared_ptr<const LoadedPlugin> plugin_;
};

// An object a plugin made, holding the plugin's library loaded while it lives.
template <typename Interface>
using PluginPtr = std::unique_ptr<Interface, KeepsPluginLoaded>;

// A loaded, checked plugin. Keeps the shared library open while any copy of it, or any
// object it made (a PluginPtr), lives. Always owned by a std::shared_ptr (the loader's).
class BATON_API LoadedPlugin : public std::enable_shared_from_this<LoadedPlugin> {
 public:
  LoadedPlugin(std::shared_ptr<void> handle, const PluginDescriptor* descriptor, std::string path);

  const PluginDescriptor& descriptor() const { return *descriptor_; }
  const std::string& path() const { return path_; }
  std::string name() const { return descriptor_->name; }
  PluginKind kind() const { return descriptor_->kind; }
  Viability viability() const;

  // Calls the factory; an exception from it is rethrown as PluginError naming the plugin.
  PluginPtr<PluginObject> create(const ParamValues& params) const;

  // create() and check that the object implements `Interface`.
  template <typename Interface>
  PluginPtr<Interface> create_as(const ParamValues& params) const {
    PluginPtr<PluginObject> object = create(params);
    auto* typed = dynamic_cast<Interface*>(object.get());
    if (typed == nullptr) throw_wrong_interface();
    KeepsPluginLoaded keeper = object.get_deleter();
    object.release();
    return PluginPtr<Interface>(typed, std::move(keeper));
  }

 private:
  [[noreturn]] void throw_wrong_interface() const;

  std::shared_ptr<void> handle_;
  const PluginDescriptor* descriptor_;
  std::string path_;
};

// One entry of `baton plugins`: a file that looked like a plugin, and what became of it.
struct PluginListing {
  std::string path;
  bool loaded = false;
  std::string error;                     // why it could not be loaded or was refused
  std::shared_ptr<LoadedPlugin> plugin;  // when loaded
};

class BATON_API PluginLoader {
 public:
  // `config_paths`: folders from the YAML, searched first.
  explicit PluginLoader(std::vector<std::string> config_paths = {});

  // The folders searched, in order, without duplicates.
  const std::vector<std::string>& search_dirs() const { return search_dirs_; }

  // Loads `name_or_path` as a plugin of `kind`. Throws PluginError listing every path
  // tried (missing, or the dlerror() text), and the plugins of that kind that were found.
  std::shared_ptr<LoadedPlugin> load(PluginKind kind, const std::string& name_or_path) const;

  // Every file named libbaton-*.so in the search folders (first one wins per file name).
  std::vector<PluginListing> discover() const;

 private:
  std::vector<std::string> search_dirs_;
};

// libbaton-<kind>-<name>.so
BATON_API std::string plugin_file_name(PluginKind kind, const std::string& name);

// Opens and checks one file as a plugin of `expected_kind` (or of any kind when null).
// Throws PluginError naming the file and both sides of any mismatch.
BATON_API std::shared_ptr<LoadedPlugin> load_plugin_file(const std::string& path,
                                                         const PluginKind* expected_kind);

}  // namespace baton

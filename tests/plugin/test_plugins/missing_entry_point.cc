// A shared library that is not a baton plugin: it exports no baton_plugin_info.
extern "C" __attribute__((visibility("default"))) int some_other_function() {
  return 42;
}

// The gloo transport's tensor side: makes the transport from checked parameters
// (libbaton_gloo_transport.so, loaded by the plugin file on first use).
#include <csignal>

#include "baton/plugin_implementation.h"
#include "gloo_transport.h"

namespace {

std::unique_ptr<baton::PluginObject> make_transport(const baton::ParamValues& params) {
  // gloo writes to its sockets with plain write(2): a peer that has closed its end (it
  // failed, or aborted after a size mismatch) must give this rank EPIPE, which it reports,
  // not SIGPIPE, which would kill it without a word.
  std::signal(SIGPIPE, SIG_IGN);
  baton_gloo::GlooOptions options;
  options.interface = params.get_string("interface");
  options.address = params.get_string("address");
  options.connect_timeout = params.get_seconds("timeout_s", "transport.params.timeout_s");
  if (options.interface.empty() && options.address.empty()) {
    throw baton::ConfigError(
        "transport.params: the gloo transport needs an address or an "
        "interface");
  }
  return std::make_unique<baton_gloo::GlooTransport>(options);
}

}  // namespace

BATON_PLUGIN_IMPLEMENTATION(&make_transport)

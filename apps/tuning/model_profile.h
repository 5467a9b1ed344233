// What a model costs, measured: per unit (the model's cut points) and per microbatch size,
// the forward, backward (full, input-gradient I, weight-gradient W) times and the bytes
// each unit outputs, keeps for its backward and holds as parameters; and what a transfer
// costs. The schedule search (schedule_search.h) turns it into simulator costs. Written by
// `baton-runtime profile`, cached in the run folder, read back only when its fingerprint
// (model, batch, threads, machine) matches. LibTorch-free.
#pragma once

#include <string>
#include <vector>

namespace baton_app {

struct UnitProfile {
  std::string name;
  double forward_s = 0;
  double backward_s = 0;         // full backward: input and weight gradients
  double backward_input_s = 0;   // I
  double backward_weight_s = 0;  // W
  double output_bytes = 0;       // what the unit passes on (a transfer when a stage ends here)
  double saved_bytes = 0;        // kept from its forward until its backward
  double parameter_bytes = 0;
};

struct MicrobatchProfile {
  int microbatch_size = 0;
  double input_bytes = 0;  // the model's input for one microbatch
  std::vector<UnitProfile> units;
};

// A transfer of n bytes between neighbouring ranks takes latency_s + n * seconds_per_byte,
// and occupies its sender for send_overhead_s + n * send_overhead_per_byte: latency, posting
// and the compute a message takes as measured while the ranks compute (transfer_profiler.h).
struct TransferProfile {
  double latency_s = 0;
  double seconds_per_byte = 0;
  double send_overhead_s = 0;
  double send_overhead_per_byte = 0;
  double recv_overhead_s = 0;  // what posting one receive occupies its caller
  std::string source;          // how it was found ("measured: gloo on loopback", "not measured")
};

struct ModelProfile {
  std::string model;        // model.name
  std::string fingerprint;  // what the costs depend on; see profile_fingerprint()
  int batch_size = 0;       // data.batch_size of one pipeline
  std::vector<MicrobatchProfile> sizes;
  TransferProfile transfer;
  // How much longer a stage's split backward (I + W) takes, run as a pipeline rank runs it,
  // than its units' I and W add up to, relative to its full backward (1: as the units say).
  // Model-dependent: above 1 for Linear(1024) units at few rows, below for GPT blocks. The
  // search scales every stage's I and W by it.
  double split_backward_factor = 1.0;

  // The measurements for `microbatch_size`; throws ConfigError naming the sizes it has.
  const MicrobatchProfile& at(int microbatch_size, const std::string& origin) const;
};

// Whether `path` is a profile baton wrote (of any format version), and so may be replaced.
bool is_profile_file(const std::string& path);

// Reads a profile written by write_profile(). Throws ConfigError naming `path` for a file
// that is missing, truncated or not a profile, and naming both fingerprints when
// `expected_fingerprint` is not empty and differs (a profile of another model or machine).
ModelProfile read_profile(const std::string& path, const std::string& expected_fingerprint = {});

// Writes atomically (temp file, then rename).
void write_profile(const std::string& path, const ModelProfile& profile);

std::string profile_to_json(const ModelProfile& profile);
ModelProfile profile_from_json(const std::string& text, const std::string& origin);

}  // namespace baton_app

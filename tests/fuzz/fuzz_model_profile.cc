// A model profile (profile.json in a run folder, written by `baton tune` and schedule: auto)
// as read back: refused with baton::Error naming the file, or accepted only when the search
// can use every figure (finite, not negative, sizes positive) and writing it again reads back
// the same profile. Never a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/error.h"
#include "model_profile.h"

namespace {

void check_figure(double value) {
  if (!std::isfinite(value) || value < 0) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  baton_app::ModelProfile profile;
  try {
    profile = baton_app::profile_from_json(text, "profile 'fuzz.json'");
  } catch (const baton::Error&) {
    return 0;
  }
  if (profile.batch_size < 1 || profile.sizes.empty()) __builtin_trap();
  check_figure(profile.split_backward_factor);
  const baton_app::TransferProfile& transfer = profile.transfer;
  for (double figure : {transfer.latency_s, transfer.seconds_per_byte, transfer.send_overhead_s,
                        transfer.send_overhead_per_byte, transfer.recv_overhead_s}) {
    check_figure(figure);
  }
  for (const auto& size : profile.sizes) {
    if (size.microbatch_size < 1 || size.units.empty()) __builtin_trap();
    check_figure(size.input_bytes);
    for (const auto& unit : size.units) {
      for (double figure :
           {unit.forward_s, unit.backward_s, unit.backward_input_s, unit.backward_weight_s,
            unit.output_bytes, unit.saved_bytes, unit.parameter_bytes}) {
        check_figure(figure);
      }
    }
    if (profile.at(size.microbatch_size, "fuzz").microbatch_size != size.microbatch_size) {
      __builtin_trap();
    }
  }
  // Written again, it reads back as the same profile.
  const std::string written = baton_app::profile_to_json(profile);
  if (baton_app::profile_to_json(baton_app::profile_from_json(written, "again")) != written) {
    __builtin_trap();
  }
  return 0;
}

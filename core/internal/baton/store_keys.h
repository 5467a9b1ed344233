// Every key baton's own processes use in the rendezvous store, named in one place. All of a
// run's keys live under its prefix, so runs sharing one store never see each other's; the
// transports choose their own keys under the prefix they are handed.
#pragma once

#include <cstdint>
#include <string>

namespace baton::store_keys {

// The prefix of every key of run `run_id`.
inline std::string run_prefix(const std::string& run_id) {
  return "baton/" + run_id;
}

// Ranks that failed so far (a counter), and which rank failed n-th (n from 1): the order the
// launcher reports, which may differ from the order the processes exited in.
inline const char* const kFailureCount = "failures";
inline std::string failure(std::int64_t order) {
  return "failure/" + std::to_string(order);
}

// How many processes said they are rank `rank` of the run: more than one is a stray
// process (started twice, or by hand with the run's environment), refused at rendezvous.
inline std::string rank_claim(int rank) {
  return "rank/" + std::to_string(rank) + "/claims";
}

// How many ranks have arrived at rendezvous (wait_for_every_rank).
inline std::string ranks_arrived() {
  return "rendezvous/arrived";
}

// A rank's heartbeat counter, and whether it has finished training (then it is not hung).
inline std::string heartbeat(int rank) {
  return "heartbeat/" + std::to_string(rank);
}
inline std::string heartbeat_done(int rank) {
  return "heartbeat/" + std::to_string(rank) + "/done";
}

// The cuts rank 0 chose by measuring (model.cuts: balanced), for every rank to use.
inline const char* const kBalancedCuts = "model/balanced_cuts";

// The schedule rank 0 chose by measuring (schedule.name: auto), for every rank to run.
inline const char* const kAutoSchedule = "schedule/auto_choice";

// One rank's times (and, from the last stage, the loss) for one step, gathered by rank 0.
inline std::string progress_prefix(int step) {
  return "progress/" + std::to_string(step) + "/";
}
inline std::string progress(int step, int rank) {
  return progress_prefix(step) + std::to_string(rank);
}

// Counters of the ranks done writing a step's checkpoint files / their trace.
inline std::string checkpoint_written(int step) {
  return "checkpoint/" + std::to_string(step) + "/written";
}
inline const char* const kTraceWritten = "trace/written";
// What one rank wrote into a step's checkpoint (its files' sizes and checksums, every entry's
// dtype and shape), for rank 0's manifest.
inline std::string checkpoint_record(int step, int rank) {
  return "checkpoint/" + std::to_string(step) + "/record/" + std::to_string(rank);
}

// `baton bench tune`'s rotation: what each rank's executor measured per candidate, and the
// ranks done with the rotation (none disconnects before all are).
inline std::string rotation_breakdown(int rank) {
  return "rotation/breakdown/" + std::to_string(rank);
}
inline const char* const kRotationDone = "rotation/done";

// A barrier: arrivals counted, then opened by the last to arrive.
inline std::string barrier_count(const std::string& name) {
  return "barrier/" + name;
}
inline std::string barrier_open(const std::string& name) {
  return "barrier/" + name + "/open";
}

}  // namespace baton::store_keys

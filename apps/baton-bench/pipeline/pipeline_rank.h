// `baton-bench pipeline-rank`: one rank of the pipeline benches, started by `baton bench
// pipeline` and `baton bench sweep` (trains the run, recording its steps: pipeline_record.h)
// and by `baton bench tune` (trains the candidates in turns: candidate_rotation.h). Internal:
// not listed, not for people to type.
#pragma once

#include "command_line.h"

namespace baton_app {

extern const char* const kPipelineRankCommand;

void add_pipeline_rank_command(CommandLine& command_line);

}  // namespace baton_app

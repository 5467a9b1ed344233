// Where a command writes a file or fills a folder that its command line names (`export --out`,
// `tune --profile`, `--dump-dir`), it writes only over what it made itself: never over a
// user's file (a config, a dataset, a stage file), never into a checkpoint or a run folder,
// never into something that is not a plain file or folder. One rule for every command, so a
// new output is owned the same way (tests/cli/owned_outputs_test.cc walks them).
#pragma once

#include <functional>
#include <initializer_list>
#include <string>

namespace baton_app {

// Throws baton::ConfigError naming `flag` and `path` unless a new file may be written at
// `path`: it does not exist, or it is a regular file that `made_by_baton` recognises as one
// this command wrote (an earlier export, an earlier profile); and the folder it goes into is
// not a checkpoint (it holds a manifest.json).
// `what`: what the command writes there ("an export", "a profile"), for the message.
void check_output_file(const std::string& path, const std::string& flag, const std::string& what,
                       const std::function<bool(const std::string& path)>& made_by_baton);

// The name of the file rank `rank` writes with `suffix`: "rank3.pt". Every per-rank file
// (checkpoints, exports, error records, traces' parts, benches' records) is named by it.
std::string rank_file_name(int rank, const std::string& suffix);
// `folder`/rank_file_name(rank, suffix).
std::string rank_file(const std::string& folder, int rank, const std::string& suffix);

// Whether `name` is a file a rank writes: rank<N> followed by one of `suffixes` ("rank3.pt").
bool is_rank_file_name(const std::string& name, std::initializer_list<const char*> suffixes);

// Makes `path` a folder this command writes files into, or throws baton::ConfigError naming
// `flag`: it may hold anything else (a test's configs, a run's folder), but not a file of a
// name the command writes (`writes_name`) unless the file `marker` says an earlier claim made
// it; a checkpoint is refused whole. The marker is left in it, and the folder
// is made and written now, so an unwritable one is found before any work. Several processes
// may claim one folder at once (the ranks of a run).
void claim_output_folder(const std::string& path, const std::string& flag,
                         const std::string& marker,
                         const std::function<bool(const std::string& name)>& writes_name);

}  // namespace baton_app

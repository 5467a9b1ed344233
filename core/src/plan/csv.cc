// CSV exchange with PyTorch's `_dump_csv` / `_load_csv`; the reader follows Python's csv module
// closely enough to read what it writes (quoting, "\r\n" line ends, `""` for one empty cell).
#include "baton/plan/csv.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/plan/shape_limits.h"

namespace baton {
namespace {

struct CsvRecord {
  int line = 0;  // 1-based line the record starts on
  std::vector<std::string> cells;
};

std::string source_prefix(std::string_view source) {
  return source.empty() ? std::string() : std::string(source) + ": ";
}

bool is_blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t'; });
}

// Splits CSV text into records of raw cells. Like Python's reader, an empty line is a record with
// no cells and the newline after the last record does not start another one.
std::vector<CsvRecord> split_records(std::string_view text, std::string_view source) {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    text.remove_prefix(kByteOrderMark.size());
  }

  std::vector<CsvRecord> records;
  CsvRecord record;
  std::string cell;
  bool cell_was_quoted = false;
  bool in_quotes = false;
  int line = 1;
  int quote_line = 0;  // where the open quote started, for the error
  record.line = 1;

  auto record_is_empty = [&] { return record.cells.empty() && cell.empty() && !cell_was_quoted; };
  auto end_cell = [&] {
    record.cells.push_back(cell);
    cell.clear();
    cell_was_quoted = false;
  };
  auto end_record = [&] {
    if (!record_is_empty()) end_cell();
    records.push_back(std::move(record));
    record = CsvRecord();
  };

  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == ',') {
      end_cell();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      ++line;
      record.line = line;
    } else if (c == '"' && is_blank(cell)) {
      in_quotes = true;
      quote_line = line;
      cell_was_quoted = true;
      cell.clear();
    } else {
      cell += c;
    }
  }
  if (in_quotes) {
    throw PlanError(source_prefix(source) + "line " + std::to_string(quote_line) +
                    ": a quoted cell is never closed (missing '\"')");
  }
  if (!record_is_empty()) end_record();
  return records;
}

struct ComputeSite {
  int rank = -1;
  int line = 0;
  int column = 0;
  std::string action;
};

std::string describe(const ComputeSite& site) {
  return "rank " + std::to_string(site.rank) + " (line " + std::to_string(site.line) + ", column " +
         std::to_string(site.column) + ": " + site.action + ")";
}

}  // namespace

std::string plan_to_csv(const Plan& plan) {
  std::string csv;
  for (const std::vector<PlanSlot>& steps : plan.rank_steps) {
    if (steps.size() == 1 && !steps.front()) {
      csv += "\"\"\n";  // a lone empty cell would read back as a rank with no steps
      continue;
    }
    for (size_t step = 0; step < steps.size(); ++step) {
      if (step > 0) csv += ',';
      if (steps[step]) csv += to_string(*steps[step]);
    }
    csv += '\n';
  }
  return csv;
}

Plan plan_from_csv(std::string_view text, std::string_view source) {
  const std::vector<CsvRecord> records = split_records(text, source);
  if (records.empty()) throw PlanError(source_prefix(source) + "the plan CSV has no lines");

  Plan plan;
  plan.num_ranks = static_cast<int>(records.size());
  plan.rank_steps.resize(records.size());
  int max_stage = -1;
  int max_microbatch = -1;
  // A map, not a vector indexed by stage: a typo like "90000000F0" must not allocate per stage.
  std::map<int, ComputeSite> stage_sites;

  for (int rank = 0; rank < plan.num_ranks; ++rank) {
    const CsvRecord& record = records[rank];
    for (size_t step = 0; step < record.cells.size(); ++step) {
      const std::string& cell = record.cells[step];
      if (cell.find_first_not_of(" \t") == std::string::npos) {
        plan.rank_steps[rank].push_back(std::nullopt);
        continue;
      }
      const std::string where = source_prefix(source) + "line " + std::to_string(record.line) +
                                " (rank " + std::to_string(rank) + "), column " +
                                std::to_string(step + 1) + " (step " + std::to_string(step) + ")";
      const Action action = parse_action(cell, where);
      plan.rank_steps[rank].push_back(action);

      std::vector<Action> parts = action.sub_actions;
      if (parts.empty()) parts.push_back(action);
      for (const Action& part : parts) {
        // Bounded here, where the cell is known: the checks that follow keep a table per
        // stage and microbatch, so a typo like "0F16161515" must not size them.
        if (part.microbatch >= kMaxMicrobatches) {
          throw PlanError(where + ": microbatch " + std::to_string(part.microbatch) + " in '" +
                          cell + "' is past baton's limit of " + std::to_string(kMaxMicrobatches) +
                          " microbatches");
        }
        if (part.stage >= kMaxRanks * kMaxStagesPerRank) {
          throw PlanError(where + ": stage " + std::to_string(part.stage) + " in '" + cell +
                          "' is past baton's limit of " +
                          std::to_string(kMaxRanks * kMaxStagesPerRank) + " stages");
        }
        max_stage = std::max(max_stage, part.stage);
        max_microbatch = std::max(max_microbatch, part.microbatch);
        if (!is_compute(part.type)) continue;
        ComputeSite& known = stage_sites[part.stage];
        ComputeSite here{rank, record.line, static_cast<int>(step + 1), to_string(part)};
        if (known.rank < 0) {
          known = here;
        } else if (known.rank != rank) {
          throw PlanError(source_prefix(source) + "stage " + std::to_string(part.stage) +
                          " computes on " + describe(known) + " and on " + describe(here) +
                          "; a stage lives on exactly one rank");
        }
      }
    }
  }

  plan.num_stages = max_stage + 1;
  plan.num_microbatches = max_microbatch + 1;
  for (int stage = 0; stage < plan.num_stages; ++stage) {
    const auto site = stage_sites.find(stage);
    if (site == stage_sites.end()) {
      throw PlanError(source_prefix(source) + "stage " + std::to_string(stage) +
                      " never runs F, B, I or W, so its rank cannot be inferred (stages 0.." +
                      std::to_string(max_stage) + " are used)");
    }
    plan.stage_to_rank.push_back(site->second.rank);
  }
  plan.placement = classify_placement(plan.stage_to_rank, plan.num_ranks);
  return plan;
}

void write_plan_csv(const Plan& plan, const std::string& path) {
  write_file_atomically(path, plan_to_csv(plan));
}

Plan read_plan_csv(const std::string& path) {
  // The largest plan (shape_limits.h: 2^20 units, a few actions each) is far below this.
  constexpr std::uint64_t kLargestPlanFile = 256ull << 20;
  std::string text;
  try {
    text = read_file(path, "plan CSV", kLargestPlanFile);
  } catch (const Error& error) {
    throw PlanError(error.what());
  }
  return plan_from_csv(text, path);
}

}  // namespace baton

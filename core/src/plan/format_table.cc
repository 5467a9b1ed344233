// The step x rank grid shown in plan errors and by the CLI.
#include <algorithm>
#include <string>
#include <vector>

#include "baton/plan/format.h"

namespace baton {
namespace {

std::string pad_right(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

void trim_trailing_spaces(std::string* line) {
  const size_t end = line->find_last_not_of(' ');
  line->erase(end == std::string::npos ? 0 : end + 1);
}

std::string marker_suffix(const std::vector<int>& ranks) {
  std::string suffix = " <-- ERROR HERE (rank";
  if (ranks.size() > 1) suffix += 's';
  for (size_t i = 0; i < ranks.size(); ++i) {
    suffix += (i == 0 ? " " : ", ") + std::to_string(ranks[i]);
  }
  return suffix + ")";
}

}  // namespace

std::string format_plan_table(const Plan& plan, const std::vector<TableMarker>& markers) {
  const int num_ranks = static_cast<int>(plan.rank_steps.size());
  const int num_steps = plan.num_steps();

  // A marker past the last row (a rank blocked after its final step) still gets a row.
  int num_rows = num_steps;
  for (const TableMarker& marker : markers) num_rows = std::max(num_rows, marker.step + 1);

  std::vector<std::vector<std::string>> cells(num_ranks);
  std::vector<size_t> widths(num_ranks);
  for (int rank = 0; rank < num_ranks; ++rank) {
    widths[rank] = ("Rank " + std::to_string(rank)).size();
    for (const PlanSlot& slot : plan.rank_steps[rank]) {
      cells[rank].push_back(slot ? to_string(*slot) : std::string());
      widths[rank] = std::max(widths[rank], cells[rank].back().size());
    }
  }

  const size_t label_digits = std::to_string(std::max(num_rows - 1, 0)).size();
  const size_t label_width = std::string("Step : ").size() + label_digits;

  std::string header(label_width, ' ');
  for (int rank = 0; rank < num_ranks; ++rank) {
    if (rank > 0) header += ' ';
    header += pad_right("Rank " + std::to_string(rank), widths[rank]);
  }
  trim_trailing_spaces(&header);
  std::string table = header + "\n";

  for (int step = 0; step < num_rows; ++step) {
    std::string number = std::to_string(step);
    std::string line = "Step " + std::string(label_digits - number.size(), '0') + number + ": ";
    for (int rank = 0; rank < num_ranks; ++rank) {
      if (rank > 0) line += ' ';
      const bool has_cell = step < static_cast<int>(cells[rank].size());
      line += pad_right(has_cell ? cells[rank][step] : std::string(), widths[rank]);
    }
    std::vector<int> marked_ranks;
    for (const TableMarker& marker : markers) {
      const bool is_new =
          std::find(marked_ranks.begin(), marked_ranks.end(), marker.rank) == marked_ranks.end();
      if (marker.step == step && is_new) marked_ranks.push_back(marker.rank);
    }
    if (marked_ranks.empty()) {
      trim_trailing_spaces(&line);
    } else {
      std::sort(marked_ranks.begin(), marked_ranks.end());
      line += marker_suffix(marked_ranks);
    }
    table += line + "\n";
  }
  return table;
}

}  // namespace baton

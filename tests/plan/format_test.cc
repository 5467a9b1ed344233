#include "baton/plan/format.h"
#include "baton/plan/json_text.h"

#include <gtest/gtest.h>

#include <string>

#include "plan_builders.h"

namespace baton {
namespace {

using testing::plan_from_text;

Plan small_plan() {
  return plan_from_text(2, 2, Placement::kLoop,
                        {{"0F0", "0F1", "", "", "0B0", "0B1"}, {"", "1F0", "1F1", "1B0", "1B1"}});
}

TEST(FormatTableTest, MatchesPyTorchLayout) {
  EXPECT_EQ(format_plan_table(small_plan()),
            "        Rank 0 Rank 1\n"
            "Step 0: 0F0\n"
            "Step 1: 0F1    1F0\n"
            "Step 2:        1F1\n"
            "Step 3:        1B0\n"
            "Step 4: 0B0    1B1\n"
            "Step 5: 0B1\n");
}

TEST(FormatTableTest, StepLabelsArePaddedToTheWidestStep) {
  Plan plan = testing::gpipe_plan(1, 6);  // 12 steps: labels 00..11
  const std::string table = format_plan_table(plan);
  EXPECT_EQ(table.substr(0, table.find('\n')), "         Rank 0");
  EXPECT_NE(table.find("\nStep 00: 0F0\n"), std::string::npos) << table;
  EXPECT_NE(table.find("\nStep 11: 0B5\n"), std::string::npos) << table;
}

TEST(FormatTableTest, ColumnsWidenForLongActions) {
  const Plan plan =
      plan_from_text(2, 1, Placement::kLoop, {{"0F0", "0SEND_F0"}, {"1RECV_F0", "1F0"}});
  EXPECT_EQ(format_plan_table(plan),
            "        Rank 0   Rank 1\n"
            "Step 0: 0F0      1RECV_F0\n"
            "Step 1: 0SEND_F0 1F0\n");
}

TEST(FormatTableTest, MarkersEndTheirRowsAndMergePerRow) {
  const std::string table = format_plan_table(small_plan(), {{1, 3}, {0, 4}, {1, 4}});
  EXPECT_EQ(table,
            "        Rank 0 Rank 1\n"
            "Step 0: 0F0\n"
            "Step 1: 0F1    1F0\n"
            "Step 2:        1F1\n"
            "Step 3:        1B0    <-- ERROR HERE (rank 1)\n"
            "Step 4: 0B0    1B1    <-- ERROR HERE (ranks 0, 1)\n"
            "Step 5: 0B1\n");
}

TEST(FormatTableTest, MarkerPastTheEndAddsARow) {
  const std::string table = format_plan_table(small_plan(), {{1, 6}});
  EXPECT_NE(table.find("Step 6:               <-- ERROR HERE (rank 1)\n"), std::string::npos)
      << table;
}

TEST(JsonTest, QuoteEscapesSpecialCharacters) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  EXPECT_EQ(json_quote("µs"), "\"µs\"");
}

TEST(ChromeTraceTest, HasRankProcessesAndCompleteEventsInMicroseconds) {
  const SimulationResult result = simulate(testing::gpipe_plan(2, 1));
  const std::string trace = format_chrome_trace(result);
  EXPECT_EQ(trace.rfind("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"schedule\":\"GPipe\"},"
                        "\"traceEvents\":[",
                        0),
            0u)
      << trace;
  EXPECT_NE(trace.find("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
                       "\"args\":{\"name\":\"Rank 1\"}}"),
            std::string::npos)
      << trace;
  // 1F0 runs from 1 to 2 cost units on rank 1, at its timestep 1 (after its RECV_F), and
  // leaves the rank keeping one microbatch's graph.
  EXPECT_NE(trace.find("{\"name\":\"1F0\",\"cat\":\"forward\",\"ph\":\"X\",\"pid\":1,\"tid\":0,"
                       "\"ts\":1000,\"dur\":1000,\"args\":{\"timestep\":1,\"stage\":1,"
                       "\"microbatch\":0,\"kept graph\":1,\"kept inputs\":0,"
                       "\"kept weight graph\":0}}"),
            std::string::npos)
      << trace;
  EXPECT_NE(trace.find("{\"name\":\"0B0\",\"cat\":\"backward\",\"ph\":\"X\",\"pid\":0,\"tid\":0,"
                       "\"ts\":4000,\"dur\":2000,"),
            std::string::npos)
      << trace;
  EXPECT_NE(trace.find("\"name\":\"1RECV_F0\",\"cat\":\"recv\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"),
            std::string::npos)
      << trace;
  EXPECT_EQ(trace.substr(trace.size() - 4), "\n]}\n");
}

TEST(ChromeTraceTest, FractionalCostsKeepMicrosecondPrecision) {
  SimulationCosts costs;
  costs.forward = 1.0 / 3.0;
  const std::string trace = format_chrome_trace(simulate(testing::gpipe_plan(1, 1), costs));
  EXPECT_NE(trace.find("\"name\":\"0F0\",\"cat\":\"forward\",\"ph\":\"X\",\"pid\":0,\"tid\":0,"
                       "\"ts\":0,\"dur\":333.333,"),
            std::string::npos)
      << trace;
}

TEST(SummaryJsonTest, ListsOverallAndPerRankFigures) {
  const SimulationResult result = simulate(testing::one_f_one_b_plan(2, 2));
  EXPECT_EQ(format_simulation_summary_json(result),
            "{\n"
            "  \"schedule\": \"1F1B\",\n"
            "  \"num_ranks\": 2,\n"
            "  \"makespan\": 9,\n"
            "  \"bubble_fraction\": 0.333333,\n"
            "  \"ranks\": [\n"
            "    {\"rank\": 0, \"busy_time\": 6, \"idle_time\": 3, \"bubble_fraction\": 0.333333, "
            "\"peak_activations\": 2},\n"
            "    {\"rank\": 1, \"busy_time\": 6, \"idle_time\": 3, \"bubble_fraction\": 0.333333, "
            "\"peak_activations\": 1}\n"
            "  ]\n"
            "}\n");
}

}  // namespace
}  // namespace baton

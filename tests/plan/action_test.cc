#include "baton/plan/action.h"

#include <gtest/gtest.h>

#include <string>

#include "baton/error.h"

namespace baton {
namespace {

std::string parse_error(std::string_view text, std::string_view where = {}) {
  try {
    parse_action(text, where);
  } catch (const PlanError& error) {
    return error.what();
  }
  ADD_FAILURE() << "\"" << text << "\" parsed without error";
  return {};
}

TEST(ActionTest, EveryTypeRoundTripsThroughText) {
  const struct {
    const char* text;
    int stage;
    ActionType type;
    int microbatch;
  } cases[] = {
      {"0F1", 0, ActionType::kForward, 1},
      {"1B0", 1, ActionType::kBackward, 0},
      {"2I0", 2, ActionType::kBackwardInput, 0},
      {"0W3", 0, ActionType::kBackwardWeight, 3},
      {"2SEND_F3", 2, ActionType::kSendForward, 3},
      {"0RECV_F2", 0, ActionType::kRecvForward, 2},
      {"1SEND_B0", 1, ActionType::kSendBackward, 0},
      {"1RECV_B0", 1, ActionType::kRecvBackward, 0},
      {"0UNSHARD", 0, ActionType::kUnshard, -1},
      {"3RESHARD", 3, ActionType::kReshard, -1},
      {"12REDUCE_GRAD", 12, ActionType::kReduceGrad, -1},
      {"15F123", 15, ActionType::kForward, 123},
  };
  for (const auto& c : cases) {
    const Action action = parse_action(c.text);
    EXPECT_EQ(action.stage, c.stage) << c.text;
    EXPECT_EQ(action.type, c.type) << c.text;
    EXPECT_EQ(action.microbatch, c.microbatch) << c.text;
    EXPECT_TRUE(action.sub_actions.empty()) << c.text;
    EXPECT_EQ(to_string(action), c.text);
  }
}

TEST(ActionTest, OverlapPairRoundTrips) {
  const Action action = parse_action("(0F7;7B3)OVERLAP_F_B");
  EXPECT_EQ(action.type, ActionType::kOverlapForwardBackward);
  EXPECT_EQ(action.microbatch, -1);
  ASSERT_EQ(action.sub_actions.size(), 2u);
  EXPECT_EQ(action.sub_actions[0], parse_action("0F7"));
  EXPECT_EQ(action.sub_actions[1], parse_action("7B3"));
  EXPECT_EQ(to_string(action), "(0F7;7B3)OVERLAP_F_B");
  EXPECT_EQ(to_string(parse_action("( 1F0 ; 2I4 )OVERLAP_F_B")), "(1F0;2I4)OVERLAP_F_B");
}

TEST(ActionTest, SurroundingWhitespaceIsTrimmed) {
  EXPECT_EQ(to_string(parse_action("  2SEND_F3\t\n")), "2SEND_F3");
  EXPECT_EQ(to_string(parse_action(" 0UNSHARD ")), "0UNSHARD");
}

TEST(ActionTest, EqualityComparesAllFields) {
  EXPECT_EQ(parse_action("0F1"), parse_action("0F1"));
  EXPECT_NE(parse_action("0F1"), parse_action("0F2"));
  EXPECT_NE(parse_action("0F1"), parse_action("1F1"));
  EXPECT_NE(parse_action("0F1"), parse_action("0B1"));
  EXPECT_NE(parse_action("(0F1;1B0)OVERLAP_F_B"), parse_action("(0F1;1B1)OVERLAP_F_B"));
}

TEST(ActionTest, TypeNamesAndClassification) {
  EXPECT_EQ(action_type_name(ActionType::kSendBackward), "SEND_B");
  EXPECT_EQ(action_type_name(ActionType::kOverlapForwardBackward), "OVERLAP_F_B");
  EXPECT_EQ(action_type_name(ActionType::kReduceGrad), "REDUCE_GRAD");
  for (ActionType type : {ActionType::kForward, ActionType::kBackward, ActionType::kBackwardInput,
                          ActionType::kBackwardWeight, ActionType::kOverlapForwardBackward}) {
    EXPECT_TRUE(is_compute(type)) << action_type_name(type);
    EXPECT_FALSE(is_comm(type)) << action_type_name(type);
  }
  for (ActionType type : {ActionType::kSendForward, ActionType::kRecvForward,
                          ActionType::kSendBackward, ActionType::kRecvBackward}) {
    EXPECT_TRUE(is_comm(type)) << action_type_name(type);
    EXPECT_FALSE(is_compute(type)) << action_type_name(type);
  }
  for (ActionType type : {ActionType::kUnshard, ActionType::kReshard, ActionType::kReduceGrad}) {
    EXPECT_FALSE(is_comm(type));
    EXPECT_FALSE(is_compute(type));
  }
}

TEST(ActionTest, ErrorsQuoteTextWhereAndExpectedForm) {
  const std::string message = parse_error("0X1", "rank 2, step 5");
  EXPECT_NE(message.find("\"0X1\""), std::string::npos) << message;
  EXPECT_NE(message.find("at rank 2, step 5"), std::string::npos) << message;
  EXPECT_NE(message.find("unknown action type \"X\""), std::string::npos) << message;
  EXPECT_NE(message.find("<stage><TYPE><microbatch>"), std::string::npos) << message;
  EXPECT_NE(message.find("0F1"), std::string::npos) << message;
  EXPECT_NE(message.find("(0F7;7B3)OVERLAP_F_B"), std::string::npos) << message;
}

TEST(ActionTest, RejectsMalformedText) {
  const struct {
    const char* text;
    const char* problem;
  } cases[] = {
      {"", "empty"},
      {"   ", "empty"},
      {"F1", "must start with a stage number"},
      {"0f1", "expected an action type"},
      {"0", "expected an action type"},
      {"0F", "F needs a microbatch number"},
      {"1SEND_B", "SEND_B needs a microbatch number"},
      {"0UNSHARD1", "UNSHARD takes no microbatch"},
      {"0F1x", "unexpected \"x\""},
      {"0F1 2", "unexpected \" 2\""},
      {"0FORWARD1", "unknown action type \"FORWARD\""},
      {"0OVERLAP_F_B", "unknown action type \"OVERLAP_F_B\""},
      {"-1F0", "must start with a stage number"},
      {"99999999999F0", "stage number is too large"},
      {"0F99999999999", "microbatch number is too large"},
      {"(0F1;1B0", "missing \")\""},
      {"(0F1;1B0)OVERLAP", "must be followed by OVERLAP_F_B"},
      {"(0F1)OVERLAP_F_B", "exactly one forward"},
      {"(0B1;1F0)OVERLAP_F_B", "exactly one forward"},
      {"(0F1;1B0;2F0)OVERLAP_F_B", "exactly one forward"},
      {"(0F1;)OVERLAP_F_B", "empty"},
      {"(0F1;1Q0)OVERLAP_F_B", "unknown action type \"Q\""},
  };
  for (const auto& c : cases) {
    const std::string message = parse_error(c.text);
    EXPECT_NE(message.find(c.problem), std::string::npos)
        << "text: \"" << c.text << "\"\nmessage: " << message;
  }
}

TEST(ActionTest, OverlapErrorsQuoteTheWholePair) {
  const std::string message = parse_error("(0F1;1Q0)OVERLAP_F_B", "line 1");
  EXPECT_NE(message.find("invalid action \"(0F1;1Q0)OVERLAP_F_B\" at line 1"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace baton

// The action IR: one unit of work a rank performs in a pipeline step. The text form is
// PyTorch's (torch.distributed.pipelining `_Action`) so plans move between the two.
//   0F1  2I0  0W3  1B0  2SEND_F3  1RECV_B0  0UNSHARD  (0F7;7B3)OVERLAP_F_B
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/export.h"

namespace baton {

enum class ActionType {
  kForward,                 // F
  kBackward,                // B  (full backward: input and weight gradients)
  kBackwardInput,           // I  (gradient w.r.t. the stage inputs)
  kBackwardWeight,          // W  (gradient w.r.t. the stage parameters)
  kSendForward,             // SEND_F
  kRecvForward,             // RECV_F
  kSendBackward,            // SEND_B
  kRecvBackward,            // RECV_B
  kUnshard,                 // UNSHARD      (no microbatch)
  kReshard,                 // RESHARD      (no microbatch)
  kReduceGrad,              // REDUCE_GRAD  (no microbatch)
  kOverlapForwardBackward,  // OVERLAP_F_B (sub_actions hold the pair)
};

// The PyTorch spelling of a type: "F", "SEND_B", "OVERLAP_F_B", ...
BATON_API std::string_view action_type_name(ActionType type);
// True for F, B, I, W and OVERLAP_F_B.
BATON_API bool is_compute(ActionType type);
// True for SEND_F, RECV_F, SEND_B, RECV_B.
BATON_API bool is_comm(ActionType type);

struct Action;

// The parts of an OVERLAP_F_B (its forward, then its backward), in one pointer: every other
// action has none, and a plan holds millions of actions (a std::vector here took 24 of an
// action's 40 bytes). Reads like a std::vector<Action>.
class BATON_API SubActions {
 public:
  SubActions() = default;
  SubActions(const SubActions& other);
  SubActions(SubActions&& other) noexcept;
  SubActions& operator=(const SubActions& other);
  SubActions& operator=(SubActions&& other) noexcept;
  ~SubActions();

  bool empty() const { return parts_ == nullptr || parts_->empty(); }
  std::size_t size() const { return parts_ == nullptr ? 0 : parts_->size(); }
  void push_back(Action action);
  Action& operator[](std::size_t index);
  const Action& operator[](std::size_t index) const;
  Action* data();
  const Action* data() const;
  Action* begin();
  Action* end();
  const Action* begin() const;
  const Action* end() const;
  operator std::vector<Action>() const;  // NOLINT: reads like the vector it was

  bool operator==(const SubActions& other) const;
  bool operator!=(const SubActions& other) const { return !(*this == other); }

 private:
  std::unique_ptr<std::vector<Action>> parts_;  // null when there are none
};

// 24 bytes: a plan slot (std::optional<Action>) is 32.
struct BATON_API Action {
  int stage = 0;
  ActionType type = ActionType::kForward;
  int microbatch = -1;     // -1 for the types that take none
  SubActions sub_actions;  // only for kOverlapForwardBackward

  bool operator==(const Action& other) const;
  bool operator!=(const Action& other) const { return !(*this == other); }
};

inline Action* SubActions::begin() {
  return data();
}
inline Action* SubActions::end() {
  return data() + size();
}
inline const Action* SubActions::begin() const {
  return data();
}
inline const Action* SubActions::end() const {
  return data() + size();
}

// An action of `type` on (stage, microbatch): "make_action(1, ActionType::kForward, 3)" is 1F3.
inline Action make_action(int stage, ActionType type, int microbatch) {
  Action action;
  action.stage = stage;
  action.type = type;
  action.microbatch = microbatch;
  return action;
}

// "0F1", "(0F7;7B3)OVERLAP_F_B".
BATON_API std::string to_string(const Action& action);

// Parses the text form. Throws PlanError naming the offending text, `where` (for example
// "rank 2, step 5" or "line 3, column 4"; may be empty) and the expected form.
BATON_API Action parse_action(std::string_view text, std::string_view where = {});

}  // namespace baton

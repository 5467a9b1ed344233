// Action text form: PyTorch's `_Action.__repr__` / `_Action.from_str`, but strict — PyTorch's
// regex accepts trailing garbage ("0F1x") and a missing microbatch ("0F"); a plan that silently
// means something else than written is worse than an error, so both are rejected here.
#include "baton/plan/action.h"

#include <cctype>
#include <climits>
#include <string>

#include "baton/error.h"

namespace baton {
namespace {

struct TypeSpelling {
  ActionType type;
  std::string_view name;
};

constexpr TypeSpelling kSpellings[] = {
    {ActionType::kForward, "F"},
    {ActionType::kBackward, "B"},
    {ActionType::kBackwardInput, "I"},
    {ActionType::kBackwardWeight, "W"},
    {ActionType::kSendForward, "SEND_F"},
    {ActionType::kRecvForward, "RECV_F"},
    {ActionType::kSendBackward, "SEND_B"},
    {ActionType::kRecvBackward, "RECV_B"},
    {ActionType::kUnshard, "UNSHARD"},
    {ActionType::kReshard, "RESHARD"},
    {ActionType::kReduceGrad, "REDUCE_GRAD"},
    {ActionType::kOverlapForwardBackward, "OVERLAP_F_B"},
};

constexpr std::string_view kExpectedForm =
    "expected <stage><TYPE><microbatch> such as 0F1, 1B0, 2I0, 0W3, 2SEND_F3, 1RECV_B0, "
    "1SEND_B0, 0RECV_F2; <stage><TYPE> for UNSHARD, RESHARD, REDUCE_GRAD such as 0UNSHARD; "
    "or an overlapped pair (<forward>;<backward>)OVERLAP_F_B such as (0F7;7B3)OVERLAP_F_B";

[[noreturn]] void throw_parse_error(std::string_view text, std::string_view where,
                                    std::string_view problem) {
  std::string message = "invalid action \"" + std::string(text) + "\"";
  if (!where.empty()) message += " at " + std::string(where);
  message += ": " + std::string(problem) + "; " + std::string(kExpectedForm);
  throw PlanError(message);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

bool takes_microbatch(ActionType type) {
  return type != ActionType::kUnshard && type != ActionType::kReshard &&
         type != ActionType::kReduceGrad && type != ActionType::kOverlapForwardBackward;
}

bool parse_type(std::string_view name, ActionType* type) {
  for (const TypeSpelling& spelling : kSpellings) {
    if (spelling.name == name) {
      *type = spelling.type;
      return true;
    }
  }
  return false;
}

// Digits must fit an int; the caller guarantees `digits` is non-empty and all digits.
bool parse_index(std::string_view digits, int* value) {
  long long result = 0;
  for (char c : digits) {
    result = result * 10 + (c - '0');
    if (result > INT_MAX) return false;
  }
  *value = static_cast<int>(result);
  return true;
}

size_t count_digits(std::string_view text, size_t from) {
  size_t end = from;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return end - from;
}

Action parse_simple(std::string_view text, std::string_view full_text, std::string_view where) {
  const size_t stage_digits = count_digits(text, 0);
  if (stage_digits == 0) throw_parse_error(full_text, where, "it must start with a stage number");

  size_t type_end = stage_digits;
  while (type_end < text.size() &&
         (std::isupper(static_cast<unsigned char>(text[type_end])) || text[type_end] == '_')) {
    ++type_end;
  }
  const std::string_view type_name = text.substr(stage_digits, type_end - stage_digits);
  Action action;
  if (type_name.empty()) {
    throw_parse_error(full_text, where,
                      "expected an action type (F, B, I, W, SEND_F, ...) after the stage number");
  }
  if (!parse_type(type_name, &action.type) || action.type == ActionType::kOverlapForwardBackward) {
    throw_parse_error(full_text, where, "unknown action type \"" + std::string(type_name) + "\"");
  }
  const size_t microbatch_digits = count_digits(text, type_end);
  if (type_end + microbatch_digits != text.size()) {
    throw_parse_error(full_text, where,
                      "unexpected \"" + std::string(text.substr(type_end + microbatch_digits)) +
                          "\" after the action");
  }
  if (!parse_index(text.substr(0, stage_digits), &action.stage)) {
    throw_parse_error(full_text, where, "the stage number is too large");
  }
  if (takes_microbatch(action.type)) {
    if (microbatch_digits == 0) {
      throw_parse_error(full_text, where,
                        std::string(type_name) + " needs a microbatch number after it");
    }
    if (!parse_index(text.substr(type_end, microbatch_digits), &action.microbatch)) {
      throw_parse_error(full_text, where, "the microbatch number is too large");
    }
  } else if (microbatch_digits != 0) {
    throw_parse_error(full_text, where, std::string(type_name) + " takes no microbatch number");
  }
  return action;
}

Action parse_overlap(std::string_view text, std::string_view where) {
  const size_t close = text.find(')');
  if (close == std::string_view::npos) throw_parse_error(text, where, "missing \")\"");
  const std::string_view suffix = text.substr(close + 1);
  if (suffix != action_type_name(ActionType::kOverlapForwardBackward)) {
    throw_parse_error(text, where,
                      "a parenthesised pair must be followed by OVERLAP_F_B, not \"" +
                          std::string(suffix) + "\"");
  }

  Action overlap;
  overlap.type = ActionType::kOverlapForwardBackward;
  overlap.stage = -1;  // PyTorch's placeholder: the pair has no single stage
  std::string_view inner = text.substr(1, close - 1);
  while (true) {
    const size_t separator = inner.find(';');
    const std::string_view part = trim(inner.substr(0, separator));
    if (part.empty()) throw_parse_error(text, where, "an overlapped action is empty");
    overlap.sub_actions.push_back(parse_simple(part, text, where));
    if (separator == std::string_view::npos) break;
    inner.remove_prefix(separator + 1);
  }

  // The pair exists to overlap one forward with one backward; anything else has no defined
  // meaning for the runtime, so it is rejected rather than guessed at.
  const bool is_forward_backward_pair = overlap.sub_actions.size() == 2 &&
                                        overlap.sub_actions[0].type == ActionType::kForward &&
                                        (overlap.sub_actions[1].type == ActionType::kBackward ||
                                         overlap.sub_actions[1].type == ActionType::kBackwardInput);
  if (!is_forward_backward_pair) {
    throw_parse_error(
        text, where, "OVERLAP_F_B holds exactly one forward (F) followed by one backward (B or I)");
  }
  return overlap;
}

}  // namespace

std::string_view action_type_name(ActionType type) {
  for (const TypeSpelling& spelling : kSpellings) {
    if (spelling.type == type) return spelling.name;
  }
  return "?";
}

bool is_compute(ActionType type) {
  switch (type) {
    case ActionType::kForward:
    case ActionType::kBackward:
    case ActionType::kBackwardInput:
    case ActionType::kBackwardWeight:
    case ActionType::kOverlapForwardBackward:
      return true;
    default:
      return false;
  }
}

bool is_comm(ActionType type) {
  switch (type) {
    case ActionType::kSendForward:
    case ActionType::kRecvForward:
    case ActionType::kSendBackward:
    case ActionType::kRecvBackward:
      return true;
    default:
      return false;
  }
}

SubActions::SubActions(const SubActions& other)
    : parts_(other.parts_ ? std::make_unique<std::vector<Action>>(*other.parts_) : nullptr) {}

SubActions& SubActions::operator=(const SubActions& other) {
  if (this != &other) {
    parts_ = other.parts_ ? std::make_unique<std::vector<Action>>(*other.parts_) : nullptr;
  }
  return *this;
}

SubActions::SubActions(SubActions&& other) noexcept = default;
SubActions& SubActions::operator=(SubActions&& other) noexcept = default;
SubActions::~SubActions() = default;

// What a plan slot costs (std::optional<Action>: 32 bytes).
static_assert(sizeof(Action) <= 24, "an Action is three ints and one pointer");

void SubActions::push_back(Action action) {
  if (parts_ == nullptr) parts_ = std::make_unique<std::vector<Action>>();
  parts_->push_back(std::move(action));
}

Action& SubActions::operator[](std::size_t index) {
  return (*parts_)[index];
}

const Action& SubActions::operator[](std::size_t index) const {
  return (*parts_)[index];
}

Action* SubActions::data() {
  return parts_ == nullptr ? nullptr : parts_->data();
}

const Action* SubActions::data() const {
  return parts_ == nullptr ? nullptr : parts_->data();
}

SubActions::operator std::vector<Action>() const {
  return parts_ == nullptr ? std::vector<Action>() : *parts_;
}

bool SubActions::operator==(const SubActions& other) const {
  if (empty() || other.empty()) return empty() == other.empty();
  return *parts_ == *other.parts_;
}

bool Action::operator==(const Action& other) const {
  return stage == other.stage && type == other.type && microbatch == other.microbatch &&
         sub_actions == other.sub_actions;
}

std::string to_string(const Action& action) {
  if (action.type == ActionType::kOverlapForwardBackward) {
    std::string text = "(";
    for (size_t i = 0; i < action.sub_actions.size(); ++i) {
      if (i > 0) text += ';';
      text += to_string(action.sub_actions[i]);
    }
    return text + ")" + std::string(action_type_name(action.type));
  }
  std::string text = std::to_string(action.stage) + std::string(action_type_name(action.type));
  if (takes_microbatch(action.type)) text += std::to_string(action.microbatch);
  return text;
}

Action parse_action(std::string_view text, std::string_view where) {
  const std::string_view trimmed = trim(text);
  if (trimmed.empty()) throw_parse_error(text, where, "the text is empty");
  if (trimmed.front() == '(') return parse_overlap(trimmed, where);
  return parse_simple(trimmed, trimmed, where);
}

}  // namespace baton

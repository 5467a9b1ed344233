#include "baton/runtime/split_backward.h"

#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>
#include <torch/csrc/autograd/variable.h>

#include <unordered_map>
#include <unordered_set>

namespace baton {
namespace {

using torch::autograd::Edge;
using torch::autograd::Engine;
using torch::autograd::Node;
namespace autograd_impl = torch::autograd::impl;

struct Reach {
  bool inputs = false;
  bool params = false;
  bool weight_only() const { return params && !inputs; }
};

// Gradient edges of the outputs that take part in autograd, with their gradients.
void collect_roots(const std::vector<at::Tensor>& outputs,
                   const std::vector<at::Tensor>& output_grads, std::vector<Edge>* roots,
                   std::vector<at::Tensor>* grads) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].defined() || !outputs[i].requires_grad()) continue;
    roots->push_back(autograd_impl::gradient_edge(outputs[i]));
    grads->push_back(output_grads.empty() ? at::ones_like(outputs[i]) : output_grads[i]);
  }
}

}  // namespace

std::vector<at::Tensor> full_backward(const std::vector<at::Tensor>& outputs,
                                      const std::vector<at::Tensor>& output_grads,
                                      const std::vector<at::Tensor>& inputs) {
  std::vector<Edge> roots;
  std::vector<at::Tensor> grads;
  collect_roots(outputs, output_grads, &roots, &grads);
  if (!roots.empty()) {
    Engine::get_default_engine().execute(roots, grads, /*keep_graph=*/false,
                                         /*create_graph=*/false, /*accumulate_grad=*/true);
  }
  std::vector<at::Tensor> input_grads;
  for (const auto& input : inputs) {
    input_grads.push_back(input.defined() && input.requires_grad() ? input.grad() : at::Tensor());
  }
  return input_grads;
}

struct SplitBackward::State {
  std::vector<at::Tensor> outputs;
  std::vector<at::Tensor> inputs;
  std::vector<at::Tensor> params;
  std::vector<Edge> input_edges;  // one per input; invalid for inputs without gradient
  std::unordered_map<const Node*, std::size_t> param_of_accumulator;
  std::unordered_set<const Node*> input_accumulators;
  std::unordered_map<const Node*, Reach> reach;

  struct WeightRoot {
    std::shared_ptr<Node> node;
    std::vector<Edge> param_edges;       // accumulators reachable through weight-only edges
    std::vector<std::size_t> param_ids;  // index into params, per param edge
    // Where W enters the graph and with which gradients: for a mixed node, each of its
    // inputs with the gradient captured there during I; for a weight-only node fed by the
    // outputs, the output edges pointing at it with the outputs' own gradients (a capture
    // would also include what mixed parents pass down, which their own W counts).
    bool fed_by_outputs = false;
    std::vector<Edge> entry;
    std::vector<at::Tensor> entry_grads;
  };
  std::vector<WeightRoot> weight_roots;
  bool split = true;

  Reach classify(const std::shared_ptr<Node>& root) {
    // Iterative post-order walk: a node's reach is the union of its children's.
    std::vector<std::pair<Node*, bool>> stack{{root.get(), false}};
    while (!stack.empty()) {
      auto [node, children_done] = stack.back();
      stack.pop_back();
      if (reach.count(node) && !children_done) continue;
      if (!children_done) {
        if (input_accumulators.count(node)) {
          reach[node] = Reach{true, false};
          continue;
        }
        if (param_of_accumulator.count(node)) {
          reach[node] = Reach{false, true};
          continue;
        }
        stack.push_back({node, true});
        for (const auto& edge : node->next_edges()) {
          if (edge.function && !reach.count(edge.function.get())) {
            stack.push_back({edge.function.get(), false});
          }
        }
        continue;
      }
      Reach combined;
      for (const auto& edge : node->next_edges()) {
        if (!edge.function) continue;
        const Reach& child = reach[edge.function.get()];
        combined.inputs |= child.inputs;
        combined.params |= child.params;
      }
      reach[node] = combined;
    }
    return reach[root.get()];
  }

  // Indices of the parameters whose accumulators are reachable from `starts`, in the order
  // first found.
  std::vector<std::size_t> params_below(const std::vector<Node*>& starts) const {
    std::unordered_set<const Node*> seen;
    std::unordered_set<std::size_t> found;
    std::vector<std::size_t> ordered;
    std::vector<Node*> stack(starts.rbegin(), starts.rend());
    while (!stack.empty()) {
      Node* current = stack.back();
      stack.pop_back();
      if (!seen.insert(current).second) continue;
      auto param = param_of_accumulator.find(current);
      if (param != param_of_accumulator.end()) {
        if (found.insert(param->second).second) ordered.push_back(param->second);
        continue;
      }
      for (const auto& edge : current->next_edges()) {
        if (edge.function) stack.push_back(edge.function.get());
      }
    }
    return ordered;
  }

  void add_params(const std::vector<std::size_t>& ids, WeightRoot* root) const {
    for (std::size_t id : ids) {
      root->param_edges.push_back(autograd_impl::gradient_edge(params[id]));
      root->param_ids.push_back(id);
    }
  }

  // Parameters reachable from a mixed `node` through its weight-only children. False when
  // one of them is also reachable through a child that leads to the inputs: a split would
  // count that parameter's gradient twice.
  bool collect_weight_params(Node* node, WeightRoot* root) {
    std::vector<Node*> weight_children, input_children;
    for (const auto& edge : node->next_edges()) {
      if (!edge.function) continue;
      const Reach& child = reach[edge.function.get()];
      if (child.weight_only()) weight_children.push_back(edge.function.get());
      if (child.inputs) input_children.push_back(edge.function.get());
    }
    const auto weight_ids = params_below(weight_children);
    const std::unordered_set<std::size_t> weight_set(weight_ids.begin(), weight_ids.end());
    for (std::size_t id : params_below(input_children)) {
      if (weight_set.count(id)) return false;
    }
    add_params(weight_ids, root);
    return true;
  }

  void find_weight_roots(const std::vector<Edge>& roots) {
    std::unordered_set<const Node*> root_nodes;
    for (const auto& root : roots) {
      if (root.function) root_nodes.insert(root.function.get());
    }
    for (const auto& entry : reach) {
      Node* node = const_cast<Node*>(entry.first);
      const Reach& node_reach = entry.second;
      if (param_of_accumulator.count(node) || input_accumulators.count(node)) continue;
      if (!node_reach.params) continue;
      bool is_root = false;
      if (node_reach.inputs) {
        for (const auto& edge : node->next_edges()) {
          if (edge.function && reach[edge.function.get()].weight_only()) is_root = true;
        }
      } else {
        is_root = root_nodes.count(node) != 0;
      }
      if (!is_root) continue;
      WeightRoot weight_root;
      weight_root.node = node->shared_from_this();
      if (node_reach.inputs) {
        if (!collect_weight_params(node, &weight_root)) {
          split = false;
          return;
        }
      } else {
        // A weight-only output node: everything below it is weight work.
        weight_root.fed_by_outputs = true;
        add_params(params_below({node}), &weight_root);
      }
      weight_roots.push_back(std::move(weight_root));
    }
  }
};

SplitBackward::SplitBackward(std::vector<at::Tensor> outputs, std::vector<at::Tensor> inputs,
                             std::vector<at::Tensor> params)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.outputs = std::move(outputs);
  s.inputs = std::move(inputs);
  s.params = std::move(params);
  for (const auto& input : s.inputs) {
    if (input.defined() && input.requires_grad()) {
      s.input_edges.push_back(autograd_impl::gradient_edge(input));
      s.input_accumulators.insert(s.input_edges.back().function.get());
    } else {
      s.input_edges.emplace_back();
    }
  }
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    if (!s.params[i].requires_grad()) continue;
    s.param_of_accumulator[autograd_impl::grad_accumulator(s.params[i]).get()] = i;
  }
  std::vector<Edge> roots;
  std::vector<at::Tensor> unused;
  collect_roots(s.outputs, {}, &roots, &unused);
  for (const auto& root : roots) {
    if (root.function) s.classify(root.function);
  }
  s.find_weight_roots(roots);
}

SplitBackward::~SplitBackward() = default;

bool SplitBackward::is_split() const {
  return state_->split;
}

std::vector<at::Tensor> SplitBackward::backward_input(const std::vector<at::Tensor>& output_grads) {
  State& s = *state_;
  if (!s.split) return full_backward(s.outputs, output_grads, s.inputs);
  std::vector<Edge> roots;
  std::vector<at::Tensor> grads;
  collect_roots(s.outputs, output_grads, &roots, &grads);
  // Ask for the input gradients and for the gradient arriving at every weight root.
  std::vector<Edge> wanted;
  std::vector<std::size_t> input_slot;
  for (std::size_t i = 0; i < s.input_edges.size(); ++i) {
    if (!s.input_edges[i].function) continue;
    input_slot.push_back(i);
    wanted.push_back(s.input_edges[i]);
  }
  const std::size_t first_capture = wanted.size();
  for (auto& root : s.weight_roots) {
    root.entry.clear();
    root.entry_grads.clear();
    if (root.fed_by_outputs) {
      for (std::size_t r = 0; r < roots.size(); ++r) {
        if (roots[r].function != root.node) continue;
        root.entry.push_back(roots[r]);
        root.entry_grads.push_back(grads[r]);
      }
      continue;
    }
    for (uint32_t k = 0; k < root.node->num_inputs(); ++k) wanted.emplace_back(root.node, k);
  }
  std::vector<at::Tensor> results;
  if (!roots.empty() && !wanted.empty()) {
    results = Engine::get_default_engine().execute(roots, grads, /*keep_graph=*/true,
                                                   /*create_graph=*/false,
                                                   /*accumulate_grad=*/false, wanted);
  }
  std::vector<at::Tensor> input_grads(s.inputs.size());
  for (std::size_t j = 0; j < input_slot.size(); ++j) input_grads[input_slot[j]] = results[j];
  std::size_t next = first_capture;
  for (auto& root : s.weight_roots) {
    if (root.fed_by_outputs) continue;
    for (uint32_t k = 0; k < root.node->num_inputs(); ++k, ++next) {
      if (!results[next].defined()) continue;  // no gradient flowed into this input
      root.entry.emplace_back(root.node, k);
      root.entry_grads.push_back(results[next]);
    }
  }
  return input_grads;
}
void SplitBackward::backward_weight(const GradientFinal& on_final) {
  State& s = *state_;
  if (s.split) {
    // A parameter shared by several weight roots is final after the last of them.
    std::vector<std::size_t> last_root(s.params.size(), s.weight_roots.size());
    for (std::size_t r = 0; r < s.weight_roots.size(); ++r) {
      const auto& root = s.weight_roots[r];
      if (root.entry.empty() || root.param_edges.empty()) continue;
      for (std::size_t id : root.param_ids) last_root[id] = r;
    }
    for (std::size_t r = 0; r < s.weight_roots.size(); ++r) {
      auto& root = s.weight_roots[r];
      if (root.entry.empty() || root.param_edges.empty()) continue;
      const auto param_grads = Engine::get_default_engine().execute(
          root.entry, root.entry_grads, /*keep_graph=*/true, /*create_graph=*/false,
          /*accumulate_grad=*/false, root.param_edges);
      for (std::size_t j = 0; j < param_grads.size(); ++j) {
        if (!param_grads[j].defined()) continue;
        at::Tensor& param = s.params[root.param_ids[j]];
        at::Tensor& grad = param.mutable_grad();
        if (grad.defined()) {
          grad.add_(param_grads[j]);
        } else {
          // An optimizer's zero_grad() detaches .grad in place, which a view forbids (the
          // engine may return, say, a transpose of another gradient).
          grad = param_grads[j].is_view() ? param_grads[j].clone() : param_grads[j];
        }
      }
      if (!on_final) continue;
      for (std::size_t id : root.param_ids) {
        if (last_root[id] == r) {
          last_root[id] = s.weight_roots.size();  // once, even if listed twice in this root
          on_final(id);
        }
      }
    }
  }
  if (!s.split && on_final) {
    // I ran the full backward: every gradient of this microbatch is in already.
    for (std::size_t id = 0; id < s.params.size(); ++id) on_final(id);
  }
  // The graph (and the activations it holds) is released here.
  s.weight_roots.clear();
  s.outputs.clear();
  s.inputs.clear();
  s.reach.clear();
}

}  // namespace baton

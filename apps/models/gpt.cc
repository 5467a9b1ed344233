// A small GPT-style decoder: "embed" (token + learned position embeddings), "layers.<i>"
// (pre-norm blocks: causal self-attention and an MLP, each with a residual), "norm" and
// "head". Residuals live inside the blocks, so the model is a plain chain of its units.
#include <torch/torch.h>

#include <cmath>

#include "baton/error.h"
#include "baton/module_chain.h"
#include "linear.h"
#include "models.h"

namespace baton_models {
namespace {

struct EmbeddingImpl : torch::nn::Module {
  EmbeddingImpl(std::int64_t vocab, std::int64_t seq_len, std::int64_t width)
      : tokens(register_module("tokens", torch::nn::Embedding(vocab, width))),
        positions(register_parameter("positions", torch::randn({seq_len, width}) * 0.02)) {}
  torch::Tensor forward(const torch::Tensor& ids) {
    const auto length = ids.size(1);
    return tokens(ids) + positions.slice(0, 0, length);
  }
  torch::nn::Embedding tokens;
  torch::Tensor positions;
};
TORCH_MODULE(Embedding);

struct CausalSelfAttentionImpl : torch::nn::Module {
  CausalSelfAttentionImpl(std::int64_t width, std::int64_t heads)
      : heads(heads),
        qkv(register_module("qkv", Linear(width, 3 * width))),
        proj(register_module("proj", Linear(width, width))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    const auto batch = x.size(0), length = x.size(1), width = x.size(2);
    const auto head_width = width / heads;
    auto parts = qkv(x).chunk(3, -1);
    auto split_heads = [&](const torch::Tensor& t) {
      return t.view({batch, length, heads, head_width}).transpose(1, 2);
    };
    const auto q = split_heads(parts[0]), k = split_heads(parts[1]), v = split_heads(parts[2]);
    auto scores =
        torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_width));
    const auto mask = torch::ones({length, length}, torch::kBool).triu(1);
    scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
    const auto mixed = torch::matmul(torch::softmax(scores, -1), v);
    return proj(mixed.transpose(1, 2).reshape({batch, length, width}));
  }
  std::int64_t heads;
  Linear qkv, proj;
};
TORCH_MODULE(CausalSelfAttention);

struct FeedForwardImpl : torch::nn::Module {
  explicit FeedForwardImpl(std::int64_t width)
      : fc(register_module("fc", Linear(width, 4 * width))),
        proj(register_module("proj", Linear(4 * width, width))) {}
  torch::Tensor forward(const torch::Tensor& x) { return proj(torch::gelu(fc(x))); }
  Linear fc, proj;
};
TORCH_MODULE(FeedForward);

struct BlockImpl : torch::nn::Module {
  BlockImpl(std::int64_t width, std::int64_t heads)
      : ln1(register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})))),
        attn(register_module("attn", CausalSelfAttention(width, heads))),
        ln2(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})))),
        mlp(register_module("mlp", FeedForward(width))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    const auto h = x + attn(ln1(x));
    return h + mlp(ln2(h));
  }
  torch::nn::LayerNorm ln1;
  CausalSelfAttention attn;
  torch::nn::LayerNorm ln2;
  FeedForward mlp;
};
TORCH_MODULE(Block);

// The output head: a Linear whose weight may be another module's tensor (tied weights).
struct HeadImpl : LinearImpl {
  HeadImpl(std::int64_t width, std::int64_t vocab) : LinearImpl(width, vocab) {}
  // One tensor under two names, as GPT-2's `lm_head.weight = wte.weight`.
  void tie_weight_to(const torch::Tensor& shared) {
    weight = shared;
    parameters_["weight"] = shared;
  }
};

}  // namespace

BuiltModel build_gpt(const baton::ParamValues& params, std::uint64_t seed) {
  torch::manual_seed(seed);
  const std::int64_t vocab = params.get_int("vocab_size");
  const std::int64_t seq_len = params.get_int("seq_len");
  const std::int64_t width = params.get_int("d_model");
  const std::int64_t heads = params.get_int("heads");
  const std::int64_t layers = params.get_int("layers");
  auto root = std::make_shared<torch::nn::Module>("Gpt");
  std::vector<baton::ModuleUnit> units;
  Embedding embed(vocab, seq_len, width);
  root->register_module("embed", embed);
  units.push_back({"embed", torch::nn::AnyModule(embed)});
  auto list = root->register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < layers; ++i) {
    Block block(width, heads);
    list->push_back(block);
    units.push_back({"layers." + std::to_string(i), torch::nn::AnyModule(block)});
  }
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({width}));
  root->register_module("norm", norm);
  units.push_back({"norm", torch::nn::AnyModule(norm)});
  // Made as an untied head is (the same random draws), then its weight replaced.
  auto head = std::make_shared<HeadImpl>(width, vocab);
  if (params.get_bool("tie_embeddings")) head->tie_weight_to(embed->tokens->weight);
  root->register_module("head", head);
  units.push_back({"head", torch::nn::AnyModule(head)});

  BuiltModel model;
  model.chain = std::make_shared<baton::ModuleChain>(root, std::move(units));
  model.loss = cross_entropy_loss;
  model.inputs = {{{seq_len}, at::kLong, vocab}};
  model.output_known = true;
  model.target_shape = {seq_len};
  model.num_classes = vocab;
  return model;
}

}  // namespace baton_models

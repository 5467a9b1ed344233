// The language-model recipe the precision tests train: a GPT with its head tied to the token
// embedding, AdamW in nanoGPT's two groups, clipping, on the shipped text, the space
// character's targets ignored (model.ignore_index: the loss is the mean over the counted
// ones); recomputing as asked. A test's own --set assignments after these override them.
#pragma once

#include <string>
#include <vector>

namespace baton_test {

inline std::vector<std::string> gpt_recipe(const std::string& recompute = "off") {
  return {"model.name=gpt",
          "model.params.vocab_size=256",
          "model.params.seq_len=16",
          "model.params.d_model=32",
          "model.params.heads=2",
          "model.params.layers=2",
          "model.params.tie_embeddings=true",
          "model.recompute=" + recompute,
          "model.ignore_index=32",
          "data.batch_size=8",
          "schedule.name=1f1b",
          "schedule.microbatches=4",
          "transport.name=gloo",
          "optimizer.name=adamw",
          "optimizer.lr=0.003",
          "optimizer.weight_decay=0.1",
          "optimizer.decay=matrices",
          "optimizer.clip_grad_norm=1.0",
          "run.steps=3",
          "run.seed=5",
          "world.timeout_s=60"};
}

}  // namespace baton_test

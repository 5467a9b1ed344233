// The recipe people train language models with, equal to plain PyTorch's: a GPT whose head
// is tied to its token embedding (one tensor under two names, held by the first and the last
// stage — on two ranks, or on one rank of a V schedule), AdamW with
// nanoGPT's two parameter groups and betas (0.9, 0.95), a warm-up then cosine decay, the
// gradient clipped to a norm taken over every stage, and targets padded with ignore_index on
// uneven numbers of positions per row — so microbatches count different numbers of targets and
// only a mean over the whole batch's counted targets is right. On every kind of schedule, and
// with replicas. torch_reference.py runs the same recipe with torch.optim.AdamW,
// clip_grad_norm_ and F.cross_entropy(ignore_index=-100) on the whole batch, and compares
// every step's loss, lr and norm, the first gradients and the final weights — both tied
// names, each the whole tensor's — and the held-out loss after steps 2, 4 and 5 (eval.every
// 2), a forward-only pass through the pipeline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "launch_run.h"
#include "torch_reference.h"

namespace {

const std::string kBaton = BATON_BINARY;

// 16 rows of 16 token ids and their next tokens; row r's last (r * 5) % 11 targets are
// padding (-100), and rows 3 and 9 are all padding: microbatches of 2 rows count between 0
// and 32 targets. And 13 held-out rows, every third padded at its end: in microbatches of the
// training's rows, the last one has a row alone (a pass of its own).
void write_padded_tokens(const std::string& dir) {
  const std::string script =
      "import numpy as np\n"
      "rng = np.random.default_rng(3)\n"
      "tokens = rng.integers(0, 64, size=(16, 17))\n"
      "targets = tokens[:, 1:].copy()\n"
      "for r in range(16):\n"
      "    cut = (r * 5) % 11\n"
      "    if cut: targets[r, -cut:] = -100\n"
      "targets[3, :] = -100\n"
      "targets[9, :] = -100\n"
      "np.save('" +
      dir + "/ids.npy', tokens[:, :16].astype(np.int64))\nnp.save('" + dir +
      "/targets.npy', targets.astype(np.int64))\n"
      "held = rng.integers(0, 64, size=(13, 17))\n"
      "held_targets = held[:, 1:].copy()\n"
      "held_targets[::3, -4:] = -100\n"
      "np.save('" +
      dir + "/eval_ids.npy', held[:, :16].astype(np.int64))\nnp.save('" + dir +
      "/eval_targets.npy', held_targets.astype(np.int64))\n";
  std::ofstream(dir + "/write.py") << script;
  const auto result =
      baton_test::run_command(std::string(BATON_PYTHON) + " '" + dir + "/write.py'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
}

// The recipe over the files `write_padded_tokens` wrote to `dir`: a 2-block GPT with its head
// tied, AdamW in nanoGPT's groups, warm-up then cosine to step 5, clipping, an evaluation
// every 2 steps.
std::vector<std::string> recipe_settings(const std::string& dir) {
  return {"model.name=gpt",
          "model.params.vocab_size=64",
          "model.params.seq_len=16",
          "model.params.d_model=32",
          "model.params.heads=4",
          "model.params.layers=2",
          "model.params.tie_embeddings=true",
          "data.source=files",
          "data.inputs=" + dir + "/ids.npy",
          "data.targets=" + dir + "/targets.npy",
          "data.batch_size=16",
          "optimizer.name=adamw",
          "optimizer.lr=0.003",
          "optimizer.betas=[0.9, 0.95]",
          "optimizer.eps=1e-6",
          "optimizer.weight_decay=0.1",
          "optimizer.decay=matrices",
          "optimizer.clip_grad_norm=0.3",
          "lr_schedule.name=cosine",
          "lr_schedule.warmup_steps=2",
          "lr_schedule.min_lr=0.0003",
          "lr_schedule.decay_steps=5",
          "eval.every=2",
          "eval.inputs=" + dir + "/eval_ids.npy",
          "eval.targets=" + dir + "/eval_targets.npy",
          "run.seed=7",
          "world.timeout_s=60",
          "transport.name=gloo"};
}

struct Recipe {
  std::string name;
  int ranks;
  std::vector<std::string> layout;
};

void PrintTo(const Recipe& recipe, std::ostream* out) {
  *out << recipe.name;
}

class Recipes : public testing::TestWithParam<Recipe> {};

// clip_grad_norm 0.3 clips every step of this model (its norm is 8 to 11); the warm-up and
// the cosine both act within the 5 steps.
TEST_P(Recipes, TrainLikeTheSameRecipeInPlainPyTorch) {
  const std::string dir = ::testing::TempDir() + "/recipe-" + GetParam().name;
  baton_test::run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  write_padded_tokens(dir);
  std::vector<std::string> settings = recipe_settings(dir);
  settings.push_back("run.steps=5");
  settings.insert(settings.end(), GetParam().layout.begin(), GetParam().layout.end());
  const auto result =
      baton_test::launch(kBaton, GetParam().ranks, settings, "recipe-" + GetParam().name);
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  EXPECT_THAT(result.command.output, testing::HasSubstr("grad norm"));
  EXPECT_THAT(result.command.output, testing::HasSubstr("eval loss"));
  const auto reference = baton_test::compare_with_torch(result, GetParam().ranks, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, testing::HasSubstr("comparisons match"));
}

std::vector<Recipe> recipes() {
  return {
      {"OneFOneBTwoRanks", 2, {"schedule.name=1f1b", "schedule.microbatches=8"}},
      {"InterleavedTwoRanks",
       2,
       {"schedule.name=interleaved_1f1b", "schedule.stages_per_rank=2", "schedule.microbatches=4"}},
      {"ZeroBubbleVTwoRanks",
       2,
       {"schedule.name=zbv", "schedule.stages_per_rank=2", "schedule.microbatches=8"}},
      {"DualPipeVTwoRanks",
       2,
       {"schedule.name=dualpipev", "schedule.stages_per_rank=2", "schedule.microbatches=4"}},
      {"OneFOneBTwoRanksTwoReplicas",
       4,
       {"schedule.name=1f1b", "schedule.microbatches=4", "world.data_parallel=2"}},
  };
}

// The tied GPT's checkpoint: `baton export` gives both tied names, and the author's class
// (torch_reference.py's Gpt, its head tied) loads it with strict=True, the head still the
// embedding; a run stopped after step 3 of 5 and resumed (the warm-up, the cosine, the
// clipping and the evaluations continuing) ends with the weights of the uninterrupted run.
TEST(RecipeCheckpoints, ATiedModelExportsBothNamesAndResumesAsIfUninterrupted) {
  const std::string dir = ::testing::TempDir() + "/recipe-checkpoints";
  baton_test::run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  write_padded_tokens(dir);
  std::vector<std::string> recipe = recipe_settings(dir);
  recipe.insert(recipe.end(), {"schedule.name=1f1b", "schedule.microbatches=4"});
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> settings = recipe;
    settings.insert(settings.end(), more.begin(), more.end());
    return settings;
  };
  const auto whole = baton_test::launch(kBaton, 2, with({"run.steps=5"}), "recipe-whole");
  ASSERT_EQ(whole.command.exit_code, 0) << whole.command.output;
  const std::string resumed_dir = dir + "/resumed";
  const auto first = baton_test::launch(
      kBaton, 2, with({"run.steps=3", "run.output_dir=" + resumed_dir}), "recipe-first-part");
  ASSERT_EQ(first.command.exit_code, 0) << first.command.output;
  const auto rest =
      baton_test::launch(kBaton, 2, with({"run.steps=5", "run.output_dir=" + resumed_dir}),
                         "recipe-resumed", 180, "--resume");
  ASSERT_EQ(rest.command.exit_code, 0) << rest.command.output;
  ASSERT_THAT(rest.command.output, testing::HasSubstr("resuming after step 3"));

  const std::string exported = dir + "/model.pt";
  const auto export_run = baton_test::run_command(
      kBaton + " export '" + whole.dump_dir + "/runs/baton/checkpoints' --out '" + exported + "'");
  ASSERT_EQ(export_run.exit_code, 0) << export_run.output;
  const std::string script = std::string("import sys\nsys.path.insert(0, '") + BATON_SOURCE_DIR +
                             "/tests/pipeline')\n" + R"(import torch
import torch_reference as ref
s = ref.parse_settings(sys.argv[4:])
model = ref.Gpt(s)
state = torch.load(sys.argv[1])
print('names', 'embed.tokens.weight' in state, 'head.weight' in state)
model.load_state_dict(state, strict=True)
print('still tied', model.head.weight is model.embed.tokens.weight)
def params(folder):
    held = {}
    for r in range(2):
        held.update({k: v for k, v in torch.load(folder + '/rank%d.pt' % r).items()
                     if k.startswith('param.')})
    return held
whole, resumed = params(sys.argv[2]), params(sys.argv[3])
assert sorted(whole) == sorted(resumed), (sorted(whole), sorted(resumed))
print('resumed equals uninterrupted', all(torch.equal(whole[k], resumed[k]) for k in whole),
      len(whole))
print('exported equals', all(torch.equal(state[k[6:]], whole[k]) for k in whole))
)";
  std::ofstream(dir + "/check.py") << script;
  std::string command = std::string(BATON_PYTHON) + " '" + dir + "/check.py' '" + exported + "' '" +
                        whole.dump_dir + "' '" + rest.dump_dir + "'";
  for (const auto& setting : recipe) command += " '" + setting + "'";
  const auto python = baton_test::run_command(command);
  ASSERT_EQ(python.exit_code, 0) << python.output;
  EXPECT_THAT(python.output, testing::HasSubstr("names True True"));
  EXPECT_THAT(python.output, testing::HasSubstr("still tied True"));
  EXPECT_THAT(python.output, testing::HasSubstr("resumed equals uninterrupted True 30"));
  EXPECT_THAT(python.output, testing::HasSubstr("exported equals True"));
}

INSTANTIATE_TEST_SUITE_P(LanguageModelRecipe, Recipes, testing::ValuesIn(recipes()),
                         [](const testing::TestParamInfo<Recipe>& info) {
                           return info.param.name;
                         });

}  // namespace

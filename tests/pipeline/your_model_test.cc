// A user's own model, as written: a token-input language model scripted as one file; a
// nanoGPT-shaped model (embeddings summed in forward, a ModuleList in a loop) cut by
// baton-split and trained on every kind of schedule and with replicas; a model taking token
// ids and a mask; stage modules written by hand that pass tuples. Each trains like the same
// model trained whole by plain PyTorch (torch_reference.py), and the export loads into the
// author's class strictly. Bad input is refused before anything trains, saying what to fix.
#include <ATen/ops/allclose.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "launch_run.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;
using testing::Not;

const std::string kBaton = BATON_BINARY;
const std::string kPython = BATON_PYTHON;
const std::string kSource = BATON_SOURCE_DIR;
const std::string kNanoGpt = kSource + "/configs/models/nanogpt.py";
const std::string kModels = kSource + "/tests/pipeline/your_models";

using baton_test::plus;

class YourModel : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A folder per process: CTest runs the cases in parallel processes.
    dir_ = new std::string(::testing::TempDir() + "/your-models-" + std::to_string(::getpid()));
    const auto made =
        baton_test::run_command(kPython + " '" + kModels + "/make_your_models.py' '" + *dir_ + "'");
    made_ = new baton_test::CommandResult(made);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete made_;
  }
  void SetUp() override {
    // bootstrap installs python3-torch for the tests: writing the models must work.
    ASSERT_EQ(made_->exit_code, 0) << made_->output;
  }

  static std::string file(const std::string& name) { return *dir_ + "/" + name; }

  // baton-split as a user runs it (the installed program next to baton), with Debian's
  // Python: a python3 first on PATH may lack torch.
  static baton_test::CommandResult split(const std::string& model, const std::string& how,
                                         const std::string& out) {
    return baton_test::run_command("timeout 120 " + kPython + " '" + BATON_SPLIT + "' '" + model +
                                   "' " + how + " --out '" + out + "'");
  }

  static std::string stage_list(const std::string& folder, int stages) {
    std::string list = "[";
    for (int i = 0; i < stages; ++i) {
      list += (i ? ", " : "") + folder + "/stage-" + std::to_string(i) + ".pt";
    }
    return list + "]";
  }

  static std::vector<std::string> common(int steps = 3) {
    return {"optimizer.name=adam", "optimizer.lr=0.003", "run.steps=" + std::to_string(steps),
            "run.seed=5",          "world.timeout_s=60", "trace.enabled=false"};
  }

  // nanoGPT's stage files on the shipped text, 4 microbatches of 2 rows.
  static std::vector<std::string> nanogpt_run(const std::string& stages,
                                              const std::string& schedule, int stages_per_rank) {
    return {"model.name=torchscript",
            "model.stages=" + stages,
            "model.params.inputs=[\"int64[32]<256\"]",
            "data.source=text",
            "data.batch_size=8",
            "schedule.microbatches=4",
            "schedule.name=" + schedule,
            "schedule.stages_per_rank=" + std::to_string(stages_per_rank)};
  }

  // `baton export` of a launch's checkpoints into <its dump folder>/exported.pt.
  static baton_test::CommandResult export_run(const baton_test::LaunchResult& result) {
    return baton_test::run_command(kBaton + " export '" + result.dump_dir +
                                   "/runs/baton/checkpoints' --out '" + result.dump_dir +
                                   "/exported.pt'");
  }

  static std::string* dir_;
  static baton_test::CommandResult* made_;
};

std::string* YourModel::dir_ = nullptr;
baton_test::CommandResult* YourModel::made_ = nullptr;

// nanoGPT with its head tied to its embedding (configs/models/nanogpt_tied.py, which imports
// nanogpt.py from beside itself), cut by baton-split — which records the tie — and trained
// with the recipe: the copies on the first and last stage (two ranks; or one rank, under a V
// schedule) take the summed gradient and stay one tensor, equal to the author's class trained
// in plain PyTorch, and the export loads into it with strict=True, both names present.
TEST_F(YourModel, ATiedNanoGptCutByBatonSplitTrainsWithTheRecipeLikeTheAuthorsClass) {
  const std::string tied = kSource + "/configs/models/nanogpt_tied.py";
  const std::string two = file("nanogpt-tied-2"), four = file("nanogpt-tied-4");
  const auto split_two = split(tied, "--stages 2", two);
  ASSERT_EQ(split_two.exit_code, 0) << split_two.output;
  EXPECT_THAT(split_two.output, HasSubstr("tied: lm_head.weight = wte.weight"));
  const auto split_four = split(tied, "--split-at h.1 --split-at h.2 --split-at h.3", four);
  ASSERT_EQ(split_four.exit_code, 0) << split_four.output;
  struct Case {
    std::string name, schedule, stages;
    int ranks, stages_per_rank;
  };
  for (const Case& c : std::vector<Case>{{"1f1b", "1f1b", stage_list(two, 2), 2, 1},
                                         {"zbv", "zbv", stage_list(four, 4), 2, 2}}) {
    const auto settings = plus(
        common(4),
        plus(nanogpt_run(c.stages, c.schedule, c.stages_per_rank),
             {"optimizer.name=adamw", "optimizer.betas=[0.9, 0.95]", "optimizer.weight_decay=0.1",
              "optimizer.decay=matrices", "optimizer.clip_grad_norm=0.5", "lr_schedule.name=cosine",
              "lr_schedule.warmup_steps=2", "lr_schedule.min_lr=0.0003"}));
    const auto result = baton_test::launch(kBaton, c.ranks, settings, "nanogpt-tied-" + c.name);
    ASSERT_EQ(result.command.exit_code, 0) << c.name << "\n" << result.command.output;
    const auto reference = baton_test::compare_with_torch(result, c.ranks, settings, tied);
    EXPECT_EQ(reference.exit_code, 0) << c.name << "\n" << reference.output;
    if (c.name != "1f1b") continue;
    const std::string exported = result.dump_dir + "/exported.pt";
    const auto exporting = export_run(result);
    ASSERT_EQ(exporting.exit_code, 0) << exporting.output;
    const auto loading = baton_test::run_command(
        kPython + " -c \"import sys, torch\nsys.path.insert(0, '" + kSource +
        "/configs/models')\nimport nanogpt_tied\nmodel = nanogpt_tied.make_model()\n"
        "state = torch.load('" +
        exported +
        "')\nmodel.load_state_dict(state, strict=True)\n"
        "print('tied names', 'wte.weight' in state, 'lm_head.weight' in state, "
        "model.wte.weight is model.lm_head.weight)\"");
    ASSERT_EQ(loading.exit_code, 0) << loading.output;
    EXPECT_THAT(loading.output, HasSubstr("tied names True True True"));
  }
}

// A model written over several files imports its siblings (no PYTHONPATH); --stages N makes
// the largest stage as small as it can be; a mask input is bounded by 2; and a Python error in the
// user's file is one message naming the file, the line and the error, not a traceback — with the
// import path said for a module that is not found.
TEST_F(YourModel, AModelFileImportsItsSiblingsIsBalancedAndItsErrorsNameTheFileAndLine) {
  const auto sibling = split(kModels + "/imports_sibling.py", "--stages 2", file("sibling"));
  EXPECT_EQ(sibling.exit_code, 0) << sibling.output;
  EXPECT_THAT(sibling.output, HasSubstr("2 stages of imports_sibling.py (288 parameters)"));

  // --stages cuts where the largest stage is smallest (by parameters), and says each.
  const auto uneven = split(kModels + "/uneven.py", "--stages 2", file("uneven"));
  EXPECT_EQ(uneven.exit_code, 0) << uneven.output;
  EXPECT_THAT(uneven.output, HasSubstr("stage-0.pt: from the inputs, 40 parameters"));
  EXPECT_THAT(uneven.output, HasSubstr("stage-1.pt: from l3, 193 parameters"));

  // Each integer input is bounded by what example_inputs() shows: token ids by the
  // vocabulary, a 0/1 mask by 2 (synthetic data would otherwise draw mask values up to 49).
  const auto masked = split(kModels + "/int_mask.py", "--stages 2", file("int-mask"));
  EXPECT_EQ(masked.exit_code, 0) << masked.output;
  EXPECT_THAT(masked.output, HasSubstr("inputs: [\"int64[6]<50\", \"int64[6]<2\"]"));
  EXPECT_THAT(masked.output, HasSubstr("input 1 holds only 0 and 1 in example_inputs(): "
                                       "declared <2, a mask"));

  const auto failing = split(kModels + "/fails_to_load.py", "--stages 2", file("failing"));
  EXPECT_EQ(failing.exit_code, 1) << failing.output;
  EXPECT_THAT(failing.output,
              HasSubstr("fails_to_load.py: make_model() failed at fails_to_load.py:7 "
                        "(`return nn.Sequential(nn.Linear(4, 4), Activation())`): NameError: "
                        "name 'Activation' is not defined"));
  EXPECT_THAT(failing.output, Not(HasSubstr("Traceback")));

  const std::string missing = file("missing_import.py");
  baton_test::run_command("echo 'import no_such_module_here' > '" + missing + "'");
  const auto unfound = split(missing, "--stages 2", file("unfound"));
  EXPECT_EQ(unfound.exit_code, 1) << unfound.output;
  EXPECT_THAT(unfound.output, HasSubstr("missing_import.py: loading it failed at "
                                        "missing_import.py:1 (`import no_such_module_here`): "
                                        "ModuleNotFoundError: No module named "
                                        "'no_such_module_here'; baton-split puts the model "
                                        "file's own folder"));
}

TEST_F(YourModel, ATokenInputLanguageModelScriptedAsOneFileTrainsLikePyTorch) {
  // int64 token ids reach the embedding as they are; targets [batch, seq] against
  // [batch, seq, vocab]; the classes are learned from the model's output on a real window.
  for (const auto& [schedule, stages_per_rank] :
       std::vector<std::pair<std::string, int>>{{"1f1b", 1}, {"zbv", 2}}) {
    const auto settings =
        plus(common(), {"model.name=torchscript", "model.path=" + file("token_lm.pt"),
                        "model.params.inputs=[\"int64[16]\"]", "data.source=text",
                        "data.batch_size=8", "schedule.microbatches=4", "schedule.name=" + schedule,
                        "schedule.stages_per_rank=" + std::to_string(stages_per_rank)});
    const auto result = baton_test::launch(kBaton, 2, settings, "token-lm-" + schedule);
    ASSERT_EQ(result.command.exit_code, 0) << schedule << "\n" << result.command.output;
    const auto reference = baton_test::compare_with_torch(result, 2, settings);
    EXPECT_EQ(reference.exit_code, 0) << schedule << "\n" << reference.output;
  }
}

TEST_F(YourModel, ANanoGptCutByBatonSplitTrainsLikeTheAuthorsClassOnEverySchedule) {
  const std::string two = file("nanogpt-2"), four = file("nanogpt-4");
  const auto split_two = split(kNanoGpt, "--stages 2", two);
  ASSERT_EQ(split_two.exit_code, 0) << split_two.output;
  EXPECT_THAT(split_two.output, HasSubstr("2 stages of nanogpt.py (234880 parameters), equal to "
                                          "its forward on example_inputs()"));
  EXPECT_THAT(split_two.output, HasSubstr("inputs: [\"int64[32]<256\"]"));
  const auto split_four = split(kNanoGpt, "--split-at h.1 --split-at h.2 --split-at h.3", four);
  ASSERT_EQ(split_four.exit_code, 0) << split_four.output;

  struct Case {
    std::string name, schedule, stages;
    int ranks, stages_per_rank, replicas;
  };
  const std::vector<Case> cases = {
      {"1f1b", "1f1b", stage_list(two, 2), 2, 1, 1},
      {"interleaved", "interleaved_1f1b", stage_list(four, 4), 2, 2, 1},
      {"zbv", "zbv", stage_list(four, 4), 2, 2, 1},
      {"pp2-dp2", "1f1b", stage_list(two, 2), 4, 1, 2},
  };
  for (const Case& c : cases) {
    // SGD: attention's key bias has a gradient of exactly zero in exact arithmetic, which
    // Adam would blow up from rounding noise (in PyTorch as in baton) to full-size steps.
    const auto settings =
        plus(common(),
             plus(nanogpt_run(c.stages, c.schedule, c.stages_per_rank),
                  {"optimizer.name=sgd", "optimizer.lr=0.1", "optimizer.momentum=0.9",
                   "world.data_parallel=" + std::to_string(c.replicas), "checkpoint.every=0"}));
    const auto result = baton_test::launch(kBaton, c.ranks, settings, "nanogpt-" + c.name);
    ASSERT_EQ(result.command.exit_code, 0) << c.name << "\n" << result.command.output;
    // The reference trains make_model() itself: the run kept its class's parameter names.
    const auto reference = baton_test::compare_with_torch(result, c.ranks, settings, kNanoGpt);
    EXPECT_EQ(reference.exit_code, 0) << c.name << "\n" << reference.output;
    if (c.name != "1f1b") continue;

    // The weights back: the export loads into the author's class with strict=True, buffers
    // included, and equals the trained parameters the ranks dumped.
    const std::string exported = result.dump_dir + "/exported.pt";
    const auto exporting = export_run(result);
    ASSERT_EQ(exporting.exit_code, 0) << exporting.output;
    EXPECT_THAT(exporting.output, HasSubstr("exported 53 parameters and 4 buffers from 2 ranks"));
    const auto loading = baton_test::run_command(
        kPython +
        " -c \"import importlib.util, torch\n"
        "spec = importlib.util.spec_from_file_location('m', '" +
        kNanoGpt +
        "')\nm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "model = m.make_model()\nprint(model.load_state_dict(torch.load('" +
        exported +
        "'), strict=True))\n"
        "dumps = [torch.load('" +
        result.dump_dir + "/rank%d.pt' % r) for r in range(2)]\n" +
        "trained = {k[6:]: v for d in dumps for k, v in d.items() if k.startswith('param.')}\n"
        "state = model.state_dict()\n"
        "assert all(torch.equal(state[k], v) for k, v in trained.items()), 'export differs'\n"
        "print('equal', len(trained))\"");
    EXPECT_EQ(loading.exit_code, 0) << loading.output;
    EXPECT_THAT(loading.output, HasSubstr("<All keys matched successfully>"));
    EXPECT_THAT(loading.output, HasSubstr("equal 53"));
  }
}

TEST_F(YourModel, ACheckpointOfStageFilesResumesOntoAnotherSplitByOriginalName) {
  // Two stages on 1F1B for 2 steps, then 4 stages (another baton-split) interleaved for 2
  // more: the parameters and Adam's state go by the model's own names, so the result is the
  // uninterrupted run's.
  const std::string two = file("resume-2"), four = file("resume-4");
  ASSERT_EQ(split(kNanoGpt, "--stages 2", two).exit_code, 0);
  ASSERT_EQ(split(kNanoGpt, "--stages 4", four).exit_code, 0);
  const std::string runs = file("resume-runs");
  auto settings = [&](const std::string& stages, int per_rank, const std::string& schedule,
                      int steps) {
    return plus(common(steps),
                {"model.name=torchscript", "model.stages=" + stages,
                 "model.params.inputs=[\"int64[32]<256\"]", "data.source=text", "data.batch_size=8",
                 "schedule.microbatches=4", "schedule.name=" + schedule,
                 "schedule.stages_per_rank=" + std::to_string(per_rank), "run.output_dir=" + runs,
                 "run.name=resume", "checkpoint.every=2"});
  };
  const auto whole =
      baton_test::launch(kBaton, 2, settings(stage_list(two, 2), 1, "1f1b", 4), "resume-whole");
  ASSERT_EQ(whole.command.exit_code, 0) << whole.command.output;
  // The uninterrupted run is itself held to plain PyTorch.
  const auto reference = baton_test::compare_dumps_with_torch(
      whole.dump_dir, 2, settings(stage_list(two, 2), 1, "1f1b", 4));
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  baton_test::run_command("rm -rf '" + runs + "'");
  const auto first =
      baton_test::launch(kBaton, 2, settings(stage_list(two, 2), 1, "1f1b", 2), "resume-first");
  ASSERT_EQ(first.command.exit_code, 0) << first.command.output;
  const auto resumed =
      baton_test::launch(kBaton, 2, settings(stage_list(four, 4), 2, "interleaved_1f1b", 4),
                         "resume-second", 180, "--resume");
  ASSERT_EQ(resumed.command.exit_code, 0) << resumed.command.output;
  EXPECT_THAT(resumed.command.output, HasSubstr("restored by parameter name"));
  std::map<std::string, at::Tensor> expected, actual;
  for (const auto& dump : whole.dumps) {
    for (const auto& [key, value] : dump) {
      if (key.rfind("param.", 0) == 0) expected[key] = value;
    }
  }
  for (const auto& dump : resumed.dumps) {
    for (const auto& [key, value] : dump) {
      if (key.rfind("param.", 0) == 0) actual[key] = value;
    }
  }
  ASSERT_EQ(actual.size(), 53u);
  ASSERT_EQ(expected.size(), 53u);
  for (const auto& [key, value] : expected) {
    ASSERT_EQ(actual.count(key), 1u) << key;
    EXPECT_TRUE(at::allclose(actual.at(key), value, 1e-5, 1e-6)) << key;
  }
}

TEST_F(YourModel, AModelOfTokenIdsAndAMaskTrainsLikePyTorch) {
  // Two data files, two positional arguments; the bool mask crosses the cut next to the
  // activations (no gradient for it).
  const std::string stages = file("masked-2");
  const auto made = split(kModels + "/masked_lm.py", "--stages 2", stages);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_THAT(made.output, HasSubstr("passes [2, 16] bool, [2, 16, 32] float32"));
  const auto settings =
      plus(common(),
           {"model.name=torchscript", "model.stages=" + stage_list(stages, 2), "data.source=files",
            "data.inputs=[" + file("ids.npy") + ", " + file("mask.npy") + "]",
            "data.targets=" + file("targets.npy"), "data.batch_size=8", "schedule.microbatches=4",
            "schedule.name=1f1b"});
  const auto result = baton_test::launch(kBaton, 2, settings, "masked-lm");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference =
      baton_test::compare_with_torch(result, 2, settings, kModels + "/masked_lm.py");
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// A Llama-style decoder as people write it (tests/pipeline/your_models/llama.py: RMSNorm by
// hand, rotary embeddings with rotate_half's x.chunk(2, dim=-1), SwiGLU, a ModuleList loop)
// splits with no flag but --stages and trains like the author's class on 1F1B and
// interleaved; the same with its head tied (llama_tied.py, importing its sibling) on 1F1B and
// ZB-V.
TEST_F(YourModel, ALlamaWithRotaryEmbeddingsSplitsWithoutFlagsAndTrainsLikeTheAuthorsClass) {
  struct Case {
    std::string model, name, how, schedule;
    int stages, stages_per_rank;
  };
  for (const Case& c :
       std::vector<Case>{{"llama", "1f1b", "--stages 2", "1f1b", 2, 1},
                         {"llama", "interleaved", "--stages 4", "interleaved_1f1b", 4, 2},
                         {"llama_tied", "1f1b", "--stages 2", "1f1b", 2, 1},
                         {"llama_tied", "zbv", "--stages 4", "zbv", 4, 2}}) {
    const std::string model = kModels + "/" + c.model + ".py";
    const std::string folder = file(c.model + "-" + c.name);
    const auto made = split(model, c.how, folder);
    ASSERT_EQ(made.exit_code, 0) << c.model << " " << c.name << "\n" << made.output;
    EXPECT_THAT(made.output, Not(HasSubstr("kept whole")));  // rotary embeddings trace
    const auto settings = plus(
        common(), {"model.name=torchscript", "model.stages=" + stage_list(folder, c.stages),
                   "model.params.inputs=[\"int64[16]<96\"]", "data.source=synthetic",
                   "data.batch_size=8", "schedule.microbatches=4", "schedule.name=" + c.schedule,
                   "schedule.stages_per_rank=" + std::to_string(c.stages_per_rank)});
    const auto result = baton_test::launch(kBaton, 2, settings, c.model + "-" + c.name);
    ASSERT_EQ(result.command.exit_code, 0) << c.model << " " << c.name << "\n"
                                           << result.command.output;
    const auto reference = baton_test::compare_with_torch(result, 2, settings, model);
    EXPECT_EQ(reference.exit_code, 0) << c.model << " " << c.name << "\n" << reference.output;
  }
}

// Meta's rotary embeddings as Meta writes them: complex frequencies kept as a plain tensor
// attribute are carried as a constant, and reshape(*x.shape[:-1], -1, 2) traces because the
// sizes are numbers (the batch stays symbolic); the model trains like the author's class.
// Kept whole, the same attention goes to TorchScript as written, which cannot spread a shape:
// refused at its line with the rewrite that works everywhere.
TEST_F(YourModel, MetaStyleRotaryEmbeddingsSplitAsWritten) {
  const std::string model = kModels + "/llama_meta.py";
  const std::string folder = file("llama-meta");
  const auto made = split(model, "--stages 2", folder);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_THAT(made.output, Not(HasSubstr("kept whole")));
  EXPECT_THAT(made.output, HasSubstr("carried as constants (plain tensor attributes, not in the "
                                     "state dict): layers.0.attention.freqs_cis"));
  const auto settings =
      plus(common(), {"model.name=torchscript", "model.stages=" + stage_list(folder, 2),
                      "model.params.inputs=[\"int64[16]<96\"]", "data.source=synthetic",
                      "data.batch_size=8", "schedule.microbatches=4", "schedule.name=1f1b"});
  const auto result = baton_test::launch(kBaton, 2, settings, "llama-meta");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 2, settings, model);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  const auto refused =
      split(model, "--stages 2 --keep-whole 'layers.*.attention'", file("llama-meta-whole"));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output,
              HasSubstr("cannot be scripted by TorchScript at llama_meta.py:20 (`xq_ = "
                        "torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))`)"));
  EXPECT_THAT(refused.output, HasSubstr("write `x.unflatten(-1, (-1, 2))`"));
  EXPECT_THAT(refused.output, Not(HasSubstr("Traceback")));
}

// Token ids and their next tokens for a language model's own loss (`rows` rows of `length`,
// ids below `vocab`), with `ignored` in the targets spread unevenly — row r has r mod 5 of
// them — so that the mean of the microbatches' means is not the batch's token mean; and a
// held-out pair for eval. Written by numpy as a user's data would be.
void write_token_data(const std::string& folder, int vocab, int length, int ignored) {
  const auto made = baton_test::run_command(
      kPython + " -c \"import os, numpy as np\nos.makedirs('" + folder +
      "', exist_ok=True)\nr = np.random.default_rng(7)\nfor name, rows in (('', 24), "
      "('eval_', 8)):\n    ids = r.integers(0, " +
      std::to_string(vocab) + ", (rows, " + std::to_string(length) +
      ")).astype(np.int64)\n    targets = r.integers(0, " + std::to_string(vocab) + ", (rows, " +
      std::to_string(length) +
      ")).astype(np.int64)\n    for row in range(rows):\n        "
      "targets[row, :row % 5] = " +
      std::to_string(ignored) + "\n    np.save('" + folder +
      "/' + name + 'ids.npy', ids)\n    np.save('" + folder +
      "/' + name + 'targets.npy', targets)\n\"");
  ASSERT_EQ(made.exit_code, 0) << made.output;
}

// A GPT as the popular training repositories write it (configs/models/gpt_as_written.py):
// the blocks in transformer = ModuleDict(wte, wpe, drop, h = ModuleList, ln_f), `b, t =
// idx.size()` and an assert on t in forward, the mask buffer sliced by sizes and a branch on a
// size, bias-free LayerNorms, a tied head, and forward(idx, targets=None) returning (logits,
// loss) — a cross entropy ignoring -1. baton-split takes it with no flag: the sizes trace as
// numbers, the batch stays free; --stages looks inside `transformer.h`, the largest stage
// within 1.1x the smallest at 2 stages and 1.5x at 4 (the embedding and the tied head make
// exact balance impossible); example_inputs() gives the targets, so the last stage takes them
// and returns the model's own loss, and the printed YAML says model.loss: from_model with
// its ignore_index. It trains like the author's class on PP2 and PP2 x DP2 — each step's loss
// the model's own on the whole batch, the ignored targets spread unevenly — evaluates with
// its own loss, and the export loads into it strictly.
TEST_F(YourModel, AGptAsWrittenTrainsOnItsOwnLossSplitBalancedInsideItsContainers) {
  const std::string model = kSource + "/configs/models/gpt_as_written.py";
  const auto stage_parameters = [](const std::string& output) {
    std::vector<double> counts;
    std::size_t at = 0;
    while ((at = output.find(" parameters", at)) != std::string::npos) {
      const std::size_t start = output.rfind(' ', at - 1) + 1;
      if (output.compare(start > 2 ? start - 2 : 0, 2, ", ") == 0) {
        counts.push_back(std::stod(output.substr(start, at - start)));
      }
      at += 1;
    }
    return counts;
  };
  const std::string two = file("gpt-as-written-2");
  const auto split_two = split(model, "--stages 2", two);
  ASSERT_EQ(split_two.exit_code, 0) << split_two.output;
  EXPECT_THAT(split_two.output, HasSubstr("stage-1.pt: from transformer.h.2, "));
  EXPECT_THAT(split_two.output, HasSubstr("traced for inputs int64[32]: the stages keep the sizes "
                                          "forward() reads as numbers (gpt_as_written.py:"));
  EXPECT_THAT(split_two.output,
              HasSubstr("the model's own loss: forward(idx, targets) returns tuple of (tensor, "
                        "tensor); the last stage takes 'targets' as its last input and returns "
                        "[1] (model.loss: from_model, ignore_index -1 from its cross_entropy)"));
  EXPECT_THAT(split_two.output, HasSubstr("  loss: from_model\n  ignore_index: -1\n"));
  EXPECT_THAT(split_two.output, Not(HasSubstr("kept whole")));
  const auto halves = stage_parameters(split_two.output);
  ASSERT_EQ(halves.size(), 2u) << split_two.output;
  EXPECT_LE(std::max(halves[0], halves[1]), 1.1 * std::min(halves[0], halves[1]));
  const auto split_four = split(model, "--stages 4", file("gpt-as-written-4"));
  ASSERT_EQ(split_four.exit_code, 0) << split_four.output;
  const auto quarters = stage_parameters(split_four.output);
  ASSERT_EQ(quarters.size(), 4u) << split_four.output;
  EXPECT_LE(*std::max_element(quarters.begin(), quarters.end()),
            1.5 * *std::min_element(quarters.begin(), quarters.end()));

  const std::string data = file("gpt-as-written-data");
  write_token_data(data, 256, 32, -1);
  for (const int replicas : {1, 2}) {
    auto settings = plus(
        common(4),
        {"model.name=torchscript", "model.stages=" + stage_list(two, 2), "model.loss=from_model",
         "model.ignore_index=-1", "model.params.inputs=[\"int64[32]<256\"]", "data.source=files",
         "data.inputs=" + data + "/ids.npy", "data.targets=" + data + "/targets.npy",
         "data.batch_size=8", "schedule.microbatches=2", "schedule.name=1f1b",
         "world.data_parallel=" + std::to_string(replicas), "optimizer.name=adamw",
         "optimizer.clip_grad_norm=1.0"});
    if (replicas == 1) {
      settings = plus(settings, {"eval.every=2", "eval.inputs=" + data + "/eval_ids.npy",
                                 "eval.targets=" + data + "/eval_targets.npy"});
    }
    const std::string name = "gpt-as-written-dp" + std::to_string(replicas);
    const auto result = baton_test::launch(kBaton, 2 * replicas, settings, name);
    ASSERT_EQ(result.command.exit_code, 0) << name << "\n" << result.command.output;
    const auto reference = baton_test::compare_with_torch(result, 2 * replicas, settings, model);
    EXPECT_EQ(reference.exit_code, 0) << name << "\n" << reference.output;
    if (replicas != 1) continue;
    EXPECT_THAT(result.command.output, HasSubstr("eval loss"));
    const auto exporting = export_run(result);
    ASSERT_EQ(exporting.exit_code, 0) << exporting.output;
    const auto loading = baton_test::run_command(
        kPython + " -c \"import sys, torch\nsys.path.insert(0, '" + kSource +
        "/configs/models')\nimport gpt_as_written\nmodel = gpt_as_written.make_model()\n"
        "state = torch.load('" +
        result.dump_dir +
        "/exported.pt')\nprint(model.load_state_dict(state, strict=True))\n"
        "print('tied', model.transformer.wte.weight is model.lm_head.weight)\"");
    ASSERT_EQ(loading.exit_code, 0) << loading.output;
    EXPECT_THAT(loading.output, HasSubstr("<All keys matched successfully>"));
    EXPECT_THAT(loading.output, HasSubstr("tied True"));
  }
}

// The family of models people train most, as Hugging Face writes them: forward(input_ids,
// labels=None) returning a dict with "loss" and "logits", the blocks in `model.layers`. Split
// with labels, it trains on its own loss (PyTorch's default ignore_index, -100, spread
// unevenly) like the author's class on PP2 and PP2 x DP2, and exports back strictly. Split
// without targets, a forward returning (logits, None) gives its logits to the stages, and
// baton-split says which it picked.
TEST_F(YourModel, AModelReturningADictWithItsLossTrainsOnItAndLogitsArePickedWithoutTargets) {
  const std::string model = kModels + "/dict_loss.py";
  const std::string folder = file("dict-loss");
  const auto made = split(model, "--stages 2", folder);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_THAT(made.output, HasSubstr("stage-1.pt: from model.layers.2, "));
  EXPECT_THAT(made.output, HasSubstr("forward(input_ids, labels) returns {'loss': tensor, "
                                     "'logits': tensor}; the last stage takes 'labels' as its "
                                     "last input and returns ['loss'] (model.loss: from_model, "
                                     "ignore_index -100 from its cross_entropy)"));
  const std::string data = file("dict-loss-data");
  write_token_data(data, 48, 12, -100);
  for (const int replicas : {1, 2}) {
    const auto settings =
        plus(common(), {"model.name=torchscript", "model.stages=" + stage_list(folder, 2),
                        "model.loss=from_model", "model.params.inputs=[\"int64[12]<48\"]",
                        "data.source=files", "data.inputs=" + data + "/ids.npy",
                        "data.targets=" + data + "/targets.npy", "data.batch_size=8",
                        "schedule.microbatches=2", "schedule.name=1f1b",
                        "world.data_parallel=" + std::to_string(replicas)});
    const std::string name = "dict-loss-dp" + std::to_string(replicas);
    const auto result = baton_test::launch(kBaton, 2 * replicas, settings, name);
    ASSERT_EQ(result.command.exit_code, 0) << name << "\n" << result.command.output;
    const auto reference = baton_test::compare_with_torch(result, 2 * replicas, settings, model);
    EXPECT_EQ(reference.exit_code, 0) << name << "\n" << reference.output;
    if (replicas != 1) continue;
    // The weights back under the author's names, strictly.
    const auto exporting = export_run(result);
    ASSERT_EQ(exporting.exit_code, 0) << exporting.output;
    const auto loading = baton_test::run_command(
        kPython + " -c \"import sys, torch\nsys.path.insert(0, '" + kModels +
        "')\nimport dict_loss\nmodel = dict_loss.make_model()\nprint(model.load_state_dict("
        "torch.load('" +
        result.dump_dir + "/exported.pt'), strict=True))\"");
    ASSERT_EQ(loading.exit_code, 0) << loading.output;
    EXPECT_THAT(loading.output, HasSubstr("<All keys matched successfully>"));
  }

  // An object with .loss (a dataclass, as Hugging Face's outputs are), its targets under a
  // name of its own: --targets-arg names them; without it, baton-split says to.
  const auto object =
      split(kModels + "/object_loss.py", "--stages 2 --targets-arg y", file("object-loss"));
  ASSERT_EQ(object.exit_code, 0) << object.output;
  EXPECT_THAT(object.output, HasSubstr("forward(input_ids, y) returns {'loss': tensor, 'logits': "
                                       "tensor}; the last stage takes 'y' as its last input and "
                                       "returns ['loss'] (model.loss: from_model"));
  const auto unnamed = split(kModels + "/object_loss.py", "--stages 2", file("object-unnamed"));
  EXPECT_EQ(unnamed.exit_code, 1) << unnamed.output;
  EXPECT_THAT(unnamed.output, HasSubstr("a loss among it, but none of forward's arguments is named "
                                        "targets or labels: name the one that takes the targets "
                                        "with --targets-arg NAME"));

  const auto logits = split(kModels + "/gpt_logits_only.py", "--stages 2", file("logits-only"));
  ASSERT_EQ(logits.exit_code, 0) << logits.output;
  EXPECT_THAT(logits.output,
              HasSubstr("the model returns tuple of (tensor, None): the stages return [0] ([2, 1, "
                        "256] float32); forward takes 'targets': give them in example_inputs() to "
                        "train on the model's own loss"));
  EXPECT_THAT(logits.output, Not(HasSubstr("from_model")));
}

// Blocks torch.fx cannot trace (a branch on a tensor's value in each of four blocks) are kept
// whole — all four, said once — and train like the author's class; --keep-whole takes a
// pattern and refuses one that names nothing; a cut inside a block kept whole is refused
// naming it; --balance time gives a stage to the unit that costs the time, where parameters
// would not.
TEST_F(YourModel, UntraceableBlocksAreKeptWholeAndStagesBalanceByPatternOrTime) {
  const std::string model = kModels + "/branchy_blocks.py";
  const std::string folder = file("branchy");
  const auto made = split(model, "--stages 2", folder);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_THAT(made.output, HasSubstr("kept whole: blocks.* (blocks.0, blocks.1, blocks.2, "
                                     "blocks.3) — torch.fx cannot trace them (at "
                                     "branchy_blocks.py:14 (`if x.abs().mean() > 0.01:`)"));
  const auto settings =
      plus(common(), {"model.name=torchscript", "model.stages=" + stage_list(folder, 2),
                      "model.params.input_shape=[8]", "data.source=synthetic", "data.batch_size=8",
                      "schedule.microbatches=4", "schedule.name=1f1b"});
  const auto result = baton_test::launch(kBaton, 2, settings, "branchy");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 2, settings, model);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  const auto inside = split(model, "--split-at blocks.1.update", file("branchy-inside"));
  EXPECT_EQ(inside.exit_code, 1);
  EXPECT_THAT(inside.output, HasSubstr("--split-at blocks.1.update: it is inside 'blocks.1', "
                                       "which is kept whole"));
  const auto pattern =
      split(kModels + "/llama.py", "--stages 4 --keep-whole 'layers.*.attention'", file("kw"));
  EXPECT_EQ(pattern.exit_code, 0) << pattern.output;
  const auto unmatched =
      split(kModels + "/llama.py", "--stages 2 --keep-whole 'layer.*.attention'", file("kw2"));
  EXPECT_EQ(unmatched.exit_code, 1);
  EXPECT_THAT(unmatched.output, HasSubstr("--keep-whole layer.*.attention: the model has no "
                                          "submodule matching 'layer.*.attention'; did you mean "
                                          "layers."));

  const std::string heavy = kModels + "/heavy_unit.py";
  const auto by_params = split(heavy, "--stages 2", file("heavy-params"));
  EXPECT_THAT(by_params.output, HasSubstr("stage-1.pt: from narrow, 4420 parameters"));
  const auto by_time = split(heavy, "--stages 2 --balance time", file("heavy-time"));
  EXPECT_EQ(by_time.exit_code, 0) << by_time.output;
  // The mixer costs ~50x the rest: a loaded machine cannot turn that around.
  EXPECT_THAT(by_time.output, HasSubstr("stage-1.pt: from mixer, 260 parameters, "));
  EXPECT_THAT(by_time.output, HasSubstr("ms forward + backward"));
}

// The loss of every step, from whichever rank reported it.
at::Tensor losses_of(const baton_test::LaunchResult& result) {
  for (const auto& dump : result.dumps) {
    if (dump.count("loss")) return dump.at("loss");
  }
  return at::Tensor();
}

// A ResNet-style classifier with BatchNorm (tests/pipeline/your_models/resnet_bn.py): the
// stage files carry make_model()'s running statistics untouched by baton-split's checks, set-up
// (the shape probe) leaves them as they are, and training updates them once per microbatch —
// so after 3 steps of 4 microbatches num_batches_tracked is 12 and the running statistics
// equal the author's class trained in PyTorch a microbatch at a time (torch_reference.py
// compares every buffer), on 1F1B and on ZB-V; the export loads into the class strictly.
TEST_F(YourModel, AResNetWithBatchNormTrainsLikePyTorchItsStatisticsUntouchedBySetUp) {
  const std::string model = kModels + "/resnet_bn.py";
  const std::string two = file("resnet-2"), four = file("resnet-4");
  const auto split_two = split(model, "--stages 2", two);
  ASSERT_EQ(split_two.exit_code, 0) << split_two.output;
  const auto split_four = split(model, "--stages 4", four);
  ASSERT_EQ(split_four.exit_code, 0) << split_four.output;
  const auto untouched =
      baton_test::run_command(kPython + " -c \"import torch\nm = torch.jit.load('" + two +
                              "/stage-0.pt')\nprint('tracked', "
                              "int(dict(m.named_buffers())['stem.1.num_batches_tracked']))\"");
  EXPECT_THAT(untouched.output, HasSubstr("tracked 0"));
  struct Case {
    std::string name, schedule, stages;
    int stages_per_rank;
  };
  for (const Case& c : std::vector<Case>{{"1f1b", "1f1b", stage_list(two, 2), 1},
                                         {"zbv", "zbv", stage_list(four, 4), 2}}) {
    const auto settings = plus(
        common(), {"model.name=torchscript", "model.stages=" + c.stages,
                   "model.params.inputs=[\"float32[3, 8, 8]\"]", "data.source=synthetic",
                   "data.batch_size=16", "schedule.microbatches=4", "schedule.name=" + c.schedule,
                   "schedule.stages_per_rank=" + std::to_string(c.stages_per_rank),
                   "optimizer.name=sgd", "optimizer.lr=0.05", "optimizer.momentum=0.9"});
    const auto result = baton_test::launch(kBaton, 2, settings, "resnet-bn-" + c.name);
    ASSERT_EQ(result.command.exit_code, 0) << c.name << "\n" << result.command.output;
    const at::Tensor tracked = result.dumps.at(0).at("buffer.stem.1.num_batches_tracked");
    EXPECT_EQ(tracked.item<std::int64_t>(), 12) << c.name;
    const auto reference = baton_test::compare_with_torch(result, 2, settings, model);
    EXPECT_EQ(reference.exit_code, 0) << c.name << "\n" << reference.output;
    EXPECT_THAT(reference.output, HasSubstr("microbatched (BatchNorm2d)"));
    if (c.name != "1f1b") continue;
    const auto exporting = export_run(result);
    ASSERT_EQ(exporting.exit_code, 0) << exporting.output;
    const auto loading = baton_test::run_command(
        kPython + " -c \"import sys, torch\nsys.path.insert(0, '" + kModels +
        "')\nimport resnet_bn\nmodel = resnet_bn.make_model()\nstate = torch.load('" +
        result.dump_dir + "/exported.pt')\nprint(model.load_state_dict(state, strict=True))\n" +
        "print('tracked', int(state['blocks.3.bn2.num_batches_tracked']))\"");
    EXPECT_THAT(loading.output, HasSubstr("<All keys matched successfully>"));
    EXPECT_THAT(loading.output, HasSubstr("tracked 12"));
  }
}

// A GPT-2-style model taking (input_ids, attention_mask) with dropout
// (tests/pipeline/your_models/gpt2_dropout.py), cut into 4 stages once: every stage's
// forward of a microbatch draws its masks from a generator seeded by (seed, step, stage,
// microbatch) alone, so the same files train the same on 4-rank 1F1B, 2-rank ZB-V, 2-rank
// interleaved and interleaved with 2 replicas — each equal to the stage files run in PyTorch a
// microbatch at a time under the documented seeding rule, and all four to one another.
TEST_F(YourModel, DropoutMasksDependOnTheSplitAloneNotTheScheduleOrPlacement) {
  const std::string four = file("gpt2-dropout-4");
  const auto made = split(kModels + "/gpt2_dropout.py", "--stages 4", four);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  struct Case {
    std::string name, schedule;
    int ranks, stages_per_rank, replicas;
  };
  at::Tensor first;
  for (const Case& c : std::vector<Case>{{"1f1b-4", "1f1b", 4, 1, 1},
                                         {"zbv-2", "zbv", 2, 2, 1},
                                         {"interleaved-2", "interleaved_1f1b", 2, 2, 1},
                                         {"interleaved-2x2", "interleaved_1f1b", 4, 2, 2}}) {
    const auto settings =
        plus(common(),
             {"model.name=torchscript", "model.stages=" + stage_list(four, 4),
              "model.params.inputs=[\"int64[16]<96\", \"int64[16]<2\"]", "data.source=synthetic",
              "data.batch_size=16", "schedule.microbatches=" + std::to_string(8 / c.replicas),
              "schedule.name=" + c.schedule,
              "schedule.stages_per_rank=" + std::to_string(c.stages_per_rank),
              "world.data_parallel=" + std::to_string(c.replicas)});
    const auto result = baton_test::launch(kBaton, c.ranks, settings, "gpt2-dropout-" + c.name);
    ASSERT_EQ(result.command.exit_code, 0) << c.name << "\n" << result.command.output;
    const auto reference = baton_test::compare_with_torch(result, c.ranks, settings);
    EXPECT_EQ(reference.exit_code, 0) << c.name << "\n" << reference.output;
    EXPECT_THAT(reference.output, HasSubstr("microbatched (Dropout)"));
    const at::Tensor losses = losses_of(result);
    ASSERT_TRUE(losses.defined()) << c.name;
    if (!first.defined()) {
      first = losses;
      continue;
    }
    // Only the order of float32 sums differs between layouts (docs/testing.md): 1e-5.
    EXPECT_TRUE(at::allclose(losses, first, 1e-5, 0))
        << c.name << ": " << losses << " vs " << first;
  }
}

TEST_F(YourModel, HandWrittenStagesThatPassATupleTrainLikePyTorch) {
  // hand-0.pt maps its names to the original model's (encoder.*); hand-1.pt keeps its own.
  const auto settings =
      plus(common(), {"model.name=torchscript",
                      "model.stages=[" + file("hand-0.pt") + ", " + file("hand-1.pt") + "]",
                      "model.params.input_shape=[12]", "data.source=synthetic", "data.batch_size=8",
                      "schedule.microbatches=4", "schedule.name=1f1b"});
  const auto result = baton_test::launch(kBaton, 2, settings, "hand-stages");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  EXPECT_EQ(result.dumps.at(0).count("param.encoder.gate.weight"), 1u);
  EXPECT_EQ(result.dumps.at(1).count("param.mix.weight"), 1u);
  const auto reference = baton_test::compare_with_torch(result, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

// --- bad input: each a clear error, and nothing trains ------------------------------------

void expect_refused(const baton_test::CommandResult& result, const std::string& message) {
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr(message));
  EXPECT_THAT(result.output, Not(HasSubstr("step 1/")));
}

// The shapes a split was traced for are the shapes it runs: another sequence length is refused
// at the declaration's line (model.params.inputs), or, with data files that declare nothing,
// at set-up by the stage file itself, both saying how to split again. Files that return the
// model's own loss are refused with another loss, or with another ignore_index than the
// model's. An example the model's own assert rejects is the author's error, at their line.
TEST_F(YourModel, AStageTracedForOneSequenceLengthRefusesAnotherSayingHowToSplitAgain) {
  const std::string model = kSource + "/configs/models/gpt_as_written.py";
  const std::string folder = file("gpt-shapes");
  const auto made = split(model, "--stages 2", folder);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::string run =
      "timeout 120 " + kBaton +
      " run --no-env --set model.name=torchscript --set 'model.stages=" + stage_list(folder, 2) +
      "' --set world.ranks=2 --set schedule.name=1f1b --set data.batch_size=8 "
      "--set run.output_dir=" +
      file("traced-runs");
  const std::string own_loss = " --set model.loss=from_model --set model.ignore_index=-1";
  const auto declared = baton_test::run_command(
      run + own_loss +
      " --set 'model.params.inputs=[\"int64[64]<256\"]' --set data.source=synthetic");
  expect_refused(declared, "model.params.inputs declares inputs [64], but stage file '" + folder +
                               "/stage-0.pt' was traced for [32] (one sample each; the batch is "
                               "free)");
  EXPECT_THAT(declared.output, HasSubstr("--stages 2 --out " + folder + "` wrote the files)"));
  // ids.npy and targets.npy hold rows of 16: the model's own loss takes targets of 32, and
  // without the loss (split without targets) stage 0 itself refuses ids of 16.
  const std::string files = " --set data.source=files --set 'data.inputs=[" + file("ids.npy") +
                            "]' --set data.targets=" + file("targets.npy");
  const auto targets = baton_test::run_command(run + own_loss + files);
  expect_refused(targets,
                 "holds [48, 16] but the model's own loss takes targets of [48, 32] (one "
                 "sample [32], as baton-split traced its forward with them)");
  const std::string logits = file("gpt-shapes-logits");
  ASSERT_EQ(split(kModels + "/gpt_logits_only.py", "--stages 2", logits).exit_code, 0);
  const auto data = baton_test::run_command(
      "timeout 120 " + kBaton +
      " run --no-env --set model.name=torchscript --set 'model.stages=" + stage_list(logits, 2) +
      "' --set world.ranks=2 --set schedule.name=1f1b --set data.batch_size=8 "
      "--set run.output_dir=" +
      file("traced-runs") + files);
  expect_refused(data, "stage file '" + logits +
                           "/stage-0.pt' was traced for inputs [32] (one sample each; the batch "
                           "is free) and is given [16]");
  EXPECT_THAT(data.output, HasSubstr("(gpt_as_written.py:103 (`b, t = idx.size()`)"));
  EXPECT_THAT(data.output,
              HasSubstr("Split again with example_inputs() of the shape you train on"));

  const auto other_loss = baton_test::run_command(run + " --set data.source=synthetic");
  expect_refused(other_loss, "model.loss is 'cross_entropy', but the last stage file '" + folder +
                                 "/stage-1.pt' returns the model's own loss");
  const auto other_ignore =
      baton_test::run_command(run + " --set model.loss=from_model --set data.source=synthetic");
  expect_refused(other_ignore,
                 "model.ignore_index is -100, but the model's own loss ignores "
                 "targets equal to -1");

  const auto too_long = split(kModels + "/gpt_too_long.py", "--stages 2", file("gpt-long"));
  EXPECT_EQ(too_long.exit_code, 1) << too_long.output;
  EXPECT_THAT(too_long.output,
              HasSubstr("forward() on example_inputs() failed at gpt_as_written.py:104 (`assert t "
                        "<= self.block_size, f\"Cannot forward"));
  EXPECT_THAT(too_long.output, HasSubstr("AssertionError: Cannot forward sequence of length 80, "
                                         "block size is only 64"));
  EXPECT_THAT(too_long.output, Not(HasSubstr("Traceback")));
}

TEST_F(YourModel, AStageCountOtherThanThePlansIsRefusedByConfigCheckNamingBoth) {
  const auto result = baton_test::run_command(
      kBaton + " config check --no-env --set model.name=torchscript --set 'model.stages=[" +
      file("hand-0.pt") + ", " + file("hand-1.pt") +
      "]' --set world.ranks=2 --set schedule.stages_per_rank=2 --set "
      "schedule.name=interleaved_1f1b");
  expect_refused(result,
                 "model.stages: 2 stage files, but the plan has 4 stages (world.ranks 2 / "
                 "world.data_parallel 1 x schedule.stages_per_rank 2)");
}

TEST_F(YourModel, ScheduleAutoChoosesAmongPlansWithAsManyStagesAsFiles) {
  const std::string four = file("auto-4");
  ASSERT_EQ(split(kNanoGpt, "--stages 4", four).exit_code, 0);
  const auto settings =
      plus(common(2), {"model.name=torchscript", "model.stages=" + stage_list(four, 4),
                       "model.params.inputs=[\"int64[32]<256\"]", "data.source=text",
                       "data.batch_size=8", "schedule.name=auto",
                       // Rank 1 waits for rank 0's measurements this long: a hang guard (on a
                       // loaded machine with two threads a rank they took over 60 s).
                       "world.timeout_s=300"});
  const auto result = baton_test::launch(kBaton, 2, settings, "stage-files-auto", 400);
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  EXPECT_THAT(result.command.output, HasSubstr(", 2 stage(s) per rank, "));
  EXPECT_THAT(result.command.output, Not(HasSubstr("1 stage(s) per rank")));

  const auto three = baton_test::run_command(
      kBaton + " config check --no-env --set model.name=torchscript --set 'model.stages=[" + four +
      "/stage-0.pt, " + four + "/stage-1.pt, " + four +
      "/stage-2.pt]' --set world.ranks=2 --set schedule.name=auto");
  expect_refused(three,
                 "model.stages: 3 stage files do not share out over the pipeline's 2 "
                 "ranks (world.ranks / world.data_parallel)");
}

TEST_F(YourModel, StageFilesThatDisagreeAtTheBoundaryAreRefusedNamingBothFiles) {
  const auto result = baton_test::launch(
      kBaton, 2,
      plus(common(),
           {"model.name=torchscript",
            "model.stages=[" + file("hand-0.pt") + ", " + file("hand-1-wide.pt") + "]",
            "model.params.input_shape=[12]", "data.source=synthetic", "data.batch_size=8"}),
      "hand-wide");
  expect_refused(result.command,
                 "'hand-1-wide.pt' cannot take the outputs of 'hand-0.pt' ([1, 16] float32, "
                 "[1, 16] float32)");
}

TEST_F(YourModel, BatonSplitRefusesWhatItCannotSplitSayingWhy) {
  const auto missing = split(kNanoGpt, "--split-at h.7", file("x"));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("--split-at h.7: the model has no submodule named 'h.7'; "
                                        "did you mean h.3 or h.2 or h.1? Its units: wte, wpe, "
                                        "h.0, h.1, h.2, h.3, ln_f, lm_head"));

  const auto untraceable = split(kModels + "/untraceable.py", "--stages 2", file("x"));
  EXPECT_EQ(untraceable.exit_code, 1) << untraceable.output;
  EXPECT_THAT(untraceable.output, HasSubstr("torch.fx cannot trace the model at untraceable.py:14 "
                                            "(`if x.sum() > 0:`): TraceError"));
  EXPECT_THAT(untraceable.output, HasSubstr("write the stage modules by hand"));

  // Tied weights are no refusal any more: the split records them.
  const auto tied = split(kModels + "/tied.py", "--stages 2", file("tied"));
  EXPECT_EQ(tied.exit_code, 0) << tied.output;
  EXPECT_THAT(tied.output, HasSubstr("tied: lm_head.weight = wte.weight"));
  // Nothing half-written is left behind.
  EXPECT_NE(baton_test::run_command("test -e '" + file("x") + "/stage-0.pt'").exit_code, 0);
}

// Issue 48: stage 0 of a split at h.2 with stage 1 of a split at h.3 trained a 3-block model
// (rc 0), its export missing 13 names. Each split has an identity; files of two, out of order
// or short of the split's names are refused before anything trains.
TEST_F(YourModel, StageFilesOfTwoSplitsOrOutOfOrderAreRefused) {
  const std::string at2 = file("split-at-2"), at3 = file("split-at-3");
  ASSERT_EQ(split(kNanoGpt, "--split-at h.2", at2).exit_code, 0);
  ASSERT_EQ(split(kNanoGpt, "--split-at h.3", at3).exit_code, 0);
  const auto run = [&](const std::string& stages, const std::string& name) {
    return baton_test::launch(kBaton, 2, plus(common(1), nanogpt_run(stages, "1f1b", 1)), name)
        .command;
  };
  const auto mixed = run("[" + at2 + "/stage-0.pt, " + at3 + "/stage-1.pt]", "two-splits");
  expect_refused(mixed, "split-at-3/stage-1.pt' is stage 1 of split ");
  EXPECT_THAT(mixed.output, HasSubstr("stage files of two splits make a model nobody wrote"));
  expect_refused(run("[" + at2 + "/stage-1.pt, " + at2 + "/stage-0.pt]", "out-of-order"),
                 "/stage-1.pt' is stage 1 of 2, listed as stage 0 of 2");
}

// baton-split --out owns its folder: never a file, never a folder of a user's files; a folder
// it filled before is refilled, without the earlier split's extra stages. A model whose output
// baton's stages cannot pass is refused by baton-split, not later by baton.
TEST_F(YourModel, BatonSplitOwnsItsOutFolderAndRefusesOutputsStagesCannotPass) {
  const std::string a_file = file("split-out-file");
  baton_test::run_command("echo mine > '" + a_file + "'");
  const auto over_file = split(kModels + "/uneven.py", "--stages 2", a_file);
  EXPECT_EQ(over_file.exit_code, 1) << over_file.output;
  EXPECT_THAT(over_file.output, HasSubstr("--out " + a_file + " exists and is not a folder"));
  EXPECT_THAT(over_file.output, Not(HasSubstr("Traceback")));

  const std::string users = file("split-out-users");
  baton_test::run_command("mkdir -p '" + users + "' && echo mine > '" + users + "/model.yaml'");
  const auto over_users = split(kModels + "/uneven.py", "--stages 2", users);
  EXPECT_EQ(over_users.exit_code, 1) << over_users.output;
  EXPECT_THAT(over_users.output, HasSubstr("holds model.yaml, which baton-split did not write"));
  EXPECT_EQ(baton_test::run_command("cat '" + users + "/model.yaml'").output, "mine\n");

  const std::string again = file("split-out-again");
  ASSERT_EQ(split(kModels + "/uneven.py", "--stages 3", again).exit_code, 0);
  const auto two = split(kModels + "/uneven.py", "--stages 2", again);
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_EQ(baton_test::run_command("ls '" + again + "'").output,
            "model.yaml\nnames.json\nstage-0.pt\nstage-1.pt\n");

  // A number beside the logits in a dict: the stages return the logits, and say so. A
  // --targets-arg that names no argument of forward is refused with forward's arguments.
  const auto dict = split(kModels + "/dict_output.py", "--stages 2", file("split-dict"));
  EXPECT_EQ(dict.exit_code, 0) << dict.output;
  EXPECT_THAT(dict.output, HasSubstr("the model returns {'logits': tensor, 'n': int}: the stages "
                                     "return ['logits'] ([2, 2] float32)"));
  const auto no_logits =
      split(kModels + "/dict_output.py", "--stages 2 --targets-arg n", file("split-dict-targets"));
  EXPECT_EQ(no_logits.exit_code, 1) << no_logits.output;
  EXPECT_THAT(no_logits.output, HasSubstr("--targets-arg n: forward(x) has no argument 'n'"));
}

TEST_F(YourModel, TargetsThatDoNotFitTheOutputAreRefusedNamingTheFileAndTheFix) {
  const std::string stages = file("masked-refusals");
  const auto made = split(kModels + "/masked_lm.py", "--stages 2", stages);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto run_with = [&](const std::string& targets) {
    return baton_test::run_command(
        "timeout 120 " + kBaton +
        " run --no-env --set model.name=torchscript --set 'model.stages=[" + stages +
        "/stage-0.pt, " + stages + "/stage-1.pt]' --set world.ranks=1 " +
        "--set schedule.stages_per_rank=2 --set schedule.name=interleaved_1f1b " +
        "--set data.source=files --set 'data.inputs=[" + file("ids.npy") + ", " + file("mask.npy") +
        "]' --set data.targets=" + file(targets) +
        " --set data.batch_size=8 --set run.output_dir=" + file("refusal-runs"));
  };
  expect_refused(run_with("targets-flat.npy"),
                 "data.targets ('" + file("targets-flat.npy") +
                     "'): holds [48] but the model's output per batch is [48, 16, 64], so "
                     "class-id targets are [48, 16]");
  expect_refused(run_with("targets-high.npy"),
                 "holds class ids from 0 to 99 but the model scores 64 classes (ids 0 to 63)");
  expect_refused(run_with("targets-float.npy"),
                 "holds ([48, 16] float32) values; the loss takes class ids (integers: cross "
                 "entropy, or model.targets: classes)");
}

// A scripted loss receives the targets as the data holds them: integer files are class ids
// (padding -100 included), so a token loss of the user's own — label smoothing over ids —
// trains like PyTorch; a loss over values given class ids fails at set-up saying what it got
// and how to give it values.
TEST_F(YourModel, AScriptedLossReceivesClassIdsAsTheDataHoldsThem) {
  const std::string stages = file("masked-scripted-loss");
  const auto made = split(kModels + "/masked_lm.py", "--stages 2", stages);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto settings =
      plus(common(), {"model.name=torchscript", "model.stages=" + stage_list(stages, 2),
                      "model.loss=" + file("smoothed_token_loss.pt"), "data.source=files",
                      "data.inputs=[" + file("ids.npy") + ", " + file("mask.npy") + "]",
                      "data.targets=" + file("targets-padded.npy"), "data.batch_size=8",
                      "schedule.microbatches=4", "schedule.name=1f1b"});
  const auto result = baton_test::launch(kBaton, 2, settings, "scripted-token-loss");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference =
      baton_test::compare_with_torch(result, 2, settings, kModels + "/masked_lm.py");
  EXPECT_EQ(reference.exit_code, 0) << reference.output;

  // Synthetic data draws values unless model.targets says classes: then ids below the
  // output's width, shaped like it without its last dimension, as the reference draws them.
  const auto synthetic = plus(
      common(), {"model.name=torchscript", "model.stages=" + stage_list(stages, 2),
                 "model.loss=" + file("smoothed_token_loss.pt"), "model.targets=classes",
                 "model.params.inputs=[\"int64[16]<64\", \"bool[16]\"]", "data.source=synthetic",
                 "data.batch_size=8", "schedule.microbatches=4", "schedule.name=1f1b"});
  const auto drawn = baton_test::launch(kBaton, 2, synthetic, "scripted-token-loss-synthetic");
  ASSERT_EQ(drawn.command.exit_code, 0) << drawn.command.output;
  const auto drawn_reference =
      baton_test::compare_with_torch(drawn, 2, synthetic, kModels + "/masked_lm.py");
  EXPECT_EQ(drawn_reference.exit_code, 0) << drawn_reference.output;

  const auto refused = baton_test::run_command(
      "timeout 120 " + kBaton + " run --no-env --set model.name=torchscript --set 'model.stages=" +
      stage_list(stages, 2) + "' --set world.ranks=1 --set schedule.stages_per_rank=2 " +
      "--set schedule.name=interleaved_1f1b --set model.loss=" + file("value_loss.pt") +
      " --set data.source=files --set 'data.inputs=[" + file("ids.npy") + ", " + file("mask.npy") +
      "]' --set data.targets=" + file("targets.npy") +
      " --set data.batch_size=8 --set run.output_dir=" + file("refusal-runs"));
  expect_refused(refused,
                 "fails on the model's output ([1, 16, 64] float32) and the targets "
                 "([1, 16] int64) (class ids): ");
  EXPECT_THAT(refused.output, HasSubstr("a loss over values gets them with model.targets: values"));
}

}  // namespace

// Checkpoints: a rank killed mid-run leaves the last complete checkpoint loadable, the
// launcher names the rank, and --resume finishes the run with exactly the losses and
// parameters of an uninterrupted one; `baton export` gives Python the full model's
// state dict under its own parameter names.
#include <ATen/ops/allclose.h>
#include <ATen/ops/equal.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "launch_run.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

const std::string kBaton = BATON_BINARY;

std::vector<std::string> run_settings(const std::string& output_dir) {
  return {"model.name=mlp",
          "model.params.in_features=8",
          "model.params.hidden=16",
          "model.params.layers=2",
          "model.params.out_features=3",
          "data.source=synthetic",
          "data.batch_size=8",
          "schedule.name=1f1b",
          "schedule.microbatches=4",
          "optimizer.name=adam",
          "optimizer.lr=0.01",
          "run.steps=6",
          "run.name=ckpt",
          "checkpoint.every=2",
          "world.timeout_s=30",
          "run.output_dir=" + output_dir};
}

// "step N: loss" for every step line of a metrics.jsonl (the header line is not a step).
std::vector<std::string> losses_of(const std::string& metrics_path) {
  std::ifstream file(metrics_path);
  std::vector<std::string> losses;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("{\"step\":", 0) != 0) continue;
    const std::size_t loss = line.find("\"loss\":");
    const std::size_t end = line.find(',', loss);
    losses.push_back(line.substr(0, line.find(',')) + " " + line.substr(loss, end - loss));
  }
  return losses;
}

std::string command_line(const std::vector<std::string>& settings, const std::string& extra,
                         int ranks = 2) {
  std::string command =
      "timeout -k 5 120 " + kBaton + " launch -n " + std::to_string(ranks) + " --no-env " + extra;
  for (const auto& setting : settings) command += " --set '" + setting + "'";
  return command;
}

// The uninterrupted run a resumed one is held to is itself held to plain PyTorch.
void expect_like_torch(const std::string& dumps, const std::vector<std::string>& settings) {
  const auto reference = baton_test::compare_dumps_with_torch(dumps, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_THAT(reference.output, HasSubstr("comparisons match")) << reference.output;
}

TEST(Checkpoint, KilledRankLeavesALoadableCheckpointAndResumeMatchesAnUninterruptedRun) {
  const std::string root = ::testing::TempDir() + "/checkpoint-resume";
  baton_test::run_command("rm -rf '" + root + "' && mkdir -p '" + root + "/full' '" + root +
                          "/resumed'");
  const auto full = baton_test::run_command(
      command_line(run_settings(root + "/a"), "--dump-dir '" + root + "/full'"));
  ASSERT_EQ(full.exit_code, 0) << full.output;
  expect_like_torch(root + "/full", run_settings(root + "/a"));

  // Rank 1 dies (SIGKILL) at its first forward of step 5, which waits for rank 0's step-5
  // activation, so rank 0 has written step 4's manifest before (an order, not a race with
  // the launcher's stop): checkpoints of steps 2 and 4 exist.
  const auto killed =
      baton_test::run_command("BATON_INJECT_FAILURE=rank=1,step=5,action=1F0,by=kill " +
                              command_line(run_settings(root + "/b"), ""));
  EXPECT_NE(killed.exit_code, 0) << killed.output;
  EXPECT_THAT(killed.output, HasSubstr("launch: rank 1 failed first (killed by signal"));
  const std::string checkpoints = root + "/b/ckpt/checkpoints";
  EXPECT_TRUE(std::filesystem::exists(checkpoints + "/step-000004/manifest.json"));
  EXPECT_FALSE(std::filesystem::exists(checkpoints + "/step-000006"));

  const auto resumed = baton_test::run_command(
      command_line(run_settings(root + "/b"), "--resume --dump-dir '" + root + "/resumed'"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output,
              HasSubstr("resuming after step 4 from " + checkpoints + "/step-000004"));
  // Every step of the resumed run's metrics (steps 1-4 before the kill, 5-6 after) has the
  // uninterrupted run's loss, and there are exactly six of them.
  const auto uninterrupted = losses_of(root + "/a/ckpt/metrics.jsonl");
  ASSERT_EQ(uninterrupted.size(), 6u) << "the uninterrupted run's metrics.jsonl";
  EXPECT_EQ(losses_of(root + "/b/ckpt/metrics.jsonl"), uninterrupted);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string file = "/rank" + std::to_string(rank) + ".pt";
    const auto expected = baton_test::read_dump(root + "/full" + file);
    const auto actual = baton_test::read_dump(root + "/resumed" + file);
    int params = 0;
    for (const auto& [key, value] : expected) {
      if (key.rfind("param.", 0) != 0) continue;
      ++params;
      ASSERT_TRUE(actual.count(key)) << key;
      EXPECT_TRUE(at::equal(actual.at(key), value)) << key << " differs after --resume";
    }
    EXPECT_GT(params, 0);
  }
}

// The loss of each step line of a metrics.jsonl, by step.
std::map<int, double> loss_by_step(const std::string& metrics_path) {
  std::map<int, double> losses;
  for (const std::string& line : losses_of(metrics_path)) {
    // "{"step":4 "loss":2.31"
    const int step = std::stoi(line.substr(line.find(':') + 1));
    losses[step] = std::stod(line.substr(line.rfind(':') + 1));
  }
  return losses;
}

// A checkpoint names every parameter, and its optimizer state, by the full model's name, so a
// run may change its layout between resumes: 3 steps on 2 ranks, then 3 more as two replicas
// of that pipeline (4 ranks) or as a 4-rank pipeline (other stages, other files). Either way
// the losses and the final parameters are the uninterrupted 2-rank run's, within float
// rounding (the microbatches and replicas sum in another order).
struct Layout {
  std::string name;
  int ranks;
  std::vector<std::string> settings;
  bool by_name;  // another pipeline: parameters and optimizer state found by name
};

void PrintTo(const Layout& layout, std::ostream* out) {
  *out << layout.name << " on " << layout.ranks << " ranks";
}

class CheckpointLayouts : public testing::TestWithParam<Layout> {};

// name -> tensor over every rank file of a dump folder, for the "param." entries.
std::map<std::string, at::Tensor> parameters_in(const std::string& dir, int ranks) {
  std::map<std::string, at::Tensor> merged;
  for (int rank = 0; rank < ranks; ++rank) {
    for (const auto& [key, value] :
         baton_test::read_dump(dir + "/rank" + std::to_string(rank) + ".pt")) {
      if (key.rfind("param.", 0) == 0) merged[key] = value;
    }
  }
  return merged;
}

TEST_P(CheckpointLayouts, ResumesOnAnotherLayoutLikeAnUninterruptedRun) {
  const Layout& layout = GetParam();
  const std::string root = ::testing::TempDir() + "/checkpoint-layout-" + layout.name;
  baton_test::run_command("rm -rf '" + root + "' && mkdir -p '" + root + "/full' '" + root +
                          "/resumed'");
  const auto full = baton_test::run_command(
      command_line(run_settings(root + "/a"), "--dump-dir '" + root + "/full'"));
  ASSERT_EQ(full.exit_code, 0) << full.output;
  expect_like_torch(root + "/full", run_settings(root + "/a"));

  auto first_half = run_settings(root + "/b");
  first_half.push_back("run.steps=3");
  ASSERT_EQ(baton_test::run_command(command_line(first_half, "")).exit_code, 0);
  auto second_half = run_settings(root + "/b");
  second_half.insert(second_half.end(), layout.settings.begin(), layout.settings.end());
  const auto resumed = baton_test::run_command(
      command_line(second_half, "--resume --dump-dir '" + root + "/resumed'", layout.ranks));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("resuming after step 3 from"));
  if (layout.by_name) {
    EXPECT_THAT(resumed.output,
                HasSubstr("restored by parameter name: written by a pipeline of 2 ranks"));
  }

  const auto expected = loss_by_step(root + "/a/ckpt/metrics.jsonl");
  const auto actual = loss_by_step(root + "/b/ckpt/metrics.jsonl");
  ASSERT_EQ(expected.size(), 6u);
  for (int step = 1; step <= 6; ++step) {
    ASSERT_TRUE(actual.count(step)) << "step " << step;
    EXPECT_NEAR(actual.at(step), expected.at(step), 1e-5 * std::abs(expected.at(step)))
        << "step " << step;
  }
  // Every rank's parameters are the uninterrupted run's, by name.
  const auto reference = parameters_in(root + "/full", 2);
  std::size_t compared = 0;
  for (int rank = 0; rank < layout.ranks; ++rank) {
    for (const auto& [key, value] :
         baton_test::read_dump(root + "/resumed/rank" + std::to_string(rank) + ".pt")) {
      if (key.rfind("param.", 0) != 0) continue;
      ASSERT_TRUE(reference.count(key)) << key;
      EXPECT_TRUE(at::allclose(value, reference.at(key), 1e-5, 1e-6))
          << "rank " << rank << ": " << key << " differs";
      ++compared;
    }
  }
  EXPECT_GE(compared, reference.size());
}

INSTANTIATE_TEST_SUITE_P(Checkpoint, CheckpointLayouts,
                         testing::Values(Layout{"pp2_dp2", 4, {"world.data_parallel=2"}, false},
                                         Layout{"pp4", 4, {}, true}),
                         [](const testing::TestParamInfo<Layout>& info) {
                           return info.param.name;
                         });

// A checkpoint of another model is refused naming the parameter it lacks, or the one whose
// shape differs.
TEST(Checkpoint, ResumingAnotherModelNamesTheParameter) {
  const std::string root = ::testing::TempDir() + "/checkpoint-other-model";
  baton_test::run_command("rm -rf '" + root + "' && mkdir -p '" + root + "'");
  auto settings = run_settings(root);
  settings.push_back("run.steps=2");
  ASSERT_EQ(baton_test::run_command(command_line(settings, "")).exit_code, 0);
  auto deeper = settings;
  deeper.push_back("model.params.layers=4");
  const auto missing = baton_test::run_command(command_line(deeper, "--resume"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.output, testing::ContainsRegex("has no parameter '[a-z_.0-9]+' in any of "
                                                     "its 2 rank files"));
  auto wider = settings;
  wider.push_back("model.params.hidden=32");
  const auto reshaped = baton_test::run_command(command_line(wider, "--resume"));
  EXPECT_NE(reshaped.exit_code, 0);
  EXPECT_THAT(reshaped.output, HasSubstr("has another shape than this run's model"));
}

TEST(Checkpoint, ExportGivesPythonTheFullModelsStateDict) {
  const std::string root = ::testing::TempDir() + "/checkpoint-export";
  baton_test::run_command("rm -rf '" + root + "' && mkdir -p '" + root + "/dump'");
  auto settings = run_settings(root + "/out");
  settings.push_back("run.steps=2");
  const auto run =
      baton_test::run_command(command_line(settings, "--dump-dir '" + root + "/dump'"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto exported = baton_test::run_command(
      kBaton + " export '" + root + "/out/ckpt/checkpoints' --out '" + root + "/model.pt'");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("exported 8 parameters from 2 ranks"));

  // Python (Debian's python3-torch) loads it as a plain state dict whose every tensor equals,
  // element for element, the parameter one rank held at the end of the run.
  const std::string script =
      "import sys, torch\n"
      "model = torch.load(sys.argv[1])\n"
      "held = {}\n"
      "for path in sys.argv[2:]:\n"
      "    for key, value in torch.load(path).items():\n"
      "        if key.startswith('param.'):\n"
      "            assert key[6:] not in held, key + ' is held by two ranks'\n"
      "            held[key[6:]] = value\n"
      "assert sorted(model) == sorted(held), (sorted(model), sorted(held))\n"
      "for name in sorted(model):\n"
      "    same = model[name].shape == held[name].shape and torch.equal(model[name], held[name])\n"
      "    print(name, list(model[name].shape), 'equal' if same else 'DIFFERS')\n";
  std::ofstream(root + "/check.py") << script;
  const auto python = baton_test::run_command(std::string(BATON_PYTHON) + " '" + root +
                                              "/check.py' '" + root + "/model.pt' '" + root +
                                              "/dump/rank0.pt' '" + root + "/dump/rank1.pt'");
  ASSERT_EQ(python.exit_code, 0) << python.output;
  EXPECT_THAT(python.output, testing::Not(HasSubstr("DIFFERS"))) << python.output;
  EXPECT_THAT(python.output, HasSubstr("layers.1.fc.weight [16, 16] equal\n"));
  EXPECT_THAT(python.output, HasSubstr("head.bias [3] equal\n"));
  EXPECT_EQ(std::count(python.output.begin(), python.output.end(), '\n'), 8) << python.output;
}

// The manifest marks a checkpoint complete; one that is damaged (a disk gone bad, a hand
// edit) is refused naming the file, not read half-way into a wrong step or world size.
TEST(Checkpoint, ADamagedManifestIsRefusedNamingTheFile) {
  const std::string root = ::testing::TempDir() + "/checkpoint-manifest";
  baton_test::run_command("rm -rf '" + root + "'");
  auto settings = run_settings(root);
  settings.push_back("run.steps=2");
  const auto run = baton_test::run_command(command_line(settings, ""));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string manifest = root + "/ckpt/checkpoints/step-000002/manifest.json";
  const std::string text = baton_test::run_command("cat '" + manifest + "'").output;
  EXPECT_THAT(text, HasSubstr("\"format\": \"baton-checkpoint-2\""));
  EXPECT_THAT(text, HasSubstr("\"world_size\": 2"));
  for (const std::string damaged : {"{\"step\": 2, \"world_size\"", "not json at all",
                                    "{\"format\": \"other\", \"step\": 2}"}) {
    std::ofstream(manifest) << damaged;
    const auto resumed = baton_test::run_command(command_line(settings, "--resume"));
    EXPECT_NE(resumed.exit_code, 0) << damaged << "\n" << resumed.output;
    EXPECT_THAT(resumed.output, HasSubstr("checkpoint manifest '" + manifest +
                                          "' is not a baton-checkpoint-2 manifest"))
        << damaged << "\n"
        << resumed.output;
  }
}

// A damaged newest checkpoint is reported and skipped for the one before it; a checkpoint
// missing a rank's file is never exported as if it were the whole model; optimizer state is
// never loaded into another optimizer (LibTorch's "INTERNAL ASSERT FAILED" before).
TEST(Checkpoint, ADamagedNewestCheckpointIsSkippedAndAPartialOneIsNotExported) {
  const std::string root = ::testing::TempDir() + "/checkpoint-damaged";
  baton_test::run_command("rm -rf '" + root + "'");
  auto settings = run_settings(root);
  settings.push_back("run.steps=4");
  const auto run = baton_test::run_command(command_line(settings, ""));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string checkpoints = root + "/ckpt/checkpoints";
  const std::string newest = checkpoints + "/step-000004";

  // Truncated: the resume goes on from step 2, saying why step 4 was skipped.
  std::filesystem::resize_file(newest + "/rank1.pt",
                               std::filesystem::file_size(newest + "/rank1.pt") / 2);
  auto resume_settings = settings;
  resume_settings.push_back("run.steps=6");
  const auto resumed = baton_test::run_command(command_line(resume_settings, "--resume"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output,
              HasSubstr("skipping " + newest + ": checkpoint file '" + newest + "/rank1.pt' has "));
  EXPECT_THAT(resumed.output, HasSubstr("(truncated, or replaced by another file)"));
  EXPECT_THAT(resumed.output,
              HasSubstr("resuming after step 2 from " + checkpoints + "/step-000002"));

  // Missing: exporting that checkpoint is refused, naming the file.
  std::filesystem::remove(newest + "/rank1.pt");
  const auto exported =
      baton_test::run_command(kBaton + " export '" + newest + "' --out '" + root + "/model.pt'");
  EXPECT_NE(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("checkpoint '" + newest +
                                         "' was written by 2 ranks, but rank1.pt is missing"));
  EXPECT_FALSE(std::filesystem::exists(root + "/model.pt"));

  // Another optimizer: refused, naming both (the step-6 checkpoint the resume wrote is sound).
  auto sgd_settings = resume_settings;
  sgd_settings.push_back("optimizer.name=sgd");
  sgd_settings.push_back("run.steps=8");
  const auto other_optimizer = baton_test::run_command(command_line(sgd_settings, "--resume"));
  EXPECT_NE(other_optimizer.exit_code, 0) << other_optimizer.output;
  EXPECT_THAT(other_optimizer.output,
              HasSubstr("holds the state of optimizer adam, this run uses optimizer.name sgd"));
  EXPECT_THAT(other_optimizer.output, testing::Not(HasSubstr("INTERNAL ASSERT")));

  // A whole archive that holds something else, on rank 1 only: its checksum is not the one
  // written, so every rank skips step 6 (and the incomplete step 4) for step 2, saying why.
  const std::string step6 = checkpoints + "/step-000006";
  const auto saved = baton_test::run_command(std::string(BATON_PYTHON) +
                                             " -c \"import torch; torch.save(torch.zeros(2), '" +
                                             step6 + "/rank1.pt')\"");
  ASSERT_EQ(saved.exit_code, 0) << saved.output;
  auto later_settings = resume_settings;
  later_settings.push_back("run.steps=8");
  const auto fell_back = baton_test::run_command(command_line(later_settings, "--resume"));
  EXPECT_EQ(fell_back.exit_code, 0) << fell_back.output;
  EXPECT_THAT(fell_back.output,
              HasSubstr("skipping " + step6 + ": checkpoint file '" + step6 + "/rank1.pt' has "));
  EXPECT_THAT(fell_back.output,
              HasSubstr("resuming after step 2 from " + checkpoints + "/step-000002"));
}

// What a hostile or careless hand can do to a checkpoint, each found before it is trusted:
// the manifest records every file's size and checksum and every entry's dtype and shape.
TEST(Checkpoint, ExportAndResumeProveTheFilesAreTheOnesWritten) {
  const std::string root = ::testing::TempDir() + "/checkpoint-integrity";
  baton_test::run_command("rm -rf '" + root + "'");
  auto settings = run_settings(root);
  settings.push_back("run.steps=4");
  const auto run = baton_test::run_command(command_line(settings, ""));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string checkpoints = root + "/ckpt/checkpoints";
  const std::string step2 = checkpoints + "/step-000002", step4 = checkpoints + "/step-000004";
  const std::string python = std::string(BATON_PYTHON) + " -c ";
  auto export_of = [&](const std::string& folder) {
    return baton_test::run_command(kBaton + " export '" + folder + "' --out '" + root +
                                   "/exported.pt'");
  };
  auto backup = [&](const std::string& file) {
    baton_test::run_command("cp '" + file + "' '" + file + ".saved'");
  };
  auto restore = [&](const std::string& file) {
    baton_test::run_command("mv '" + file + ".saved' '" + file + "'");
  };
  const std::string rank0 = step4 + "/rank0.pt", rank1 = step4 + "/rank1.pt";
  const std::string manifest = step4 + "/manifest.json";
  struct Damage {
    std::string what, file, command, message;
  };
  const std::vector<Damage> damages = {
      {"an empty dict", rank1, python + "\"import torch; torch.save({}, '" + rank1 + "')\"",
       "checkpoint file '" + rank1 + "' has "},
      {"another step's file", rank1, "cp '" + step2 + "/rank1.pt' '" + rank1 + "'",
       "(damaged, or replaced by another step's or run's file)"},
      {"a flipped bit", rank0,
       python + "\"f = open('" + rank0 +
           "', 'r+b'); f.seek(200); b = f.read(1); f.seek(200); f.write(bytes([b[0] ^ 1]))\"",
       "checkpoint file '" + rank0 + "' has checksum "},
      {"optimizer state removed", rank1,
       python + "\"import torch; d = torch.load('" + rank1 +
           "'); torch.save({k: v for k, v in d.items() if not k.startswith('optim.')}, '" + rank1 +
           "')\"",
       "checkpoint file '" + rank1 + "' has "},
      {"a format that is a number", manifest,
       python + "\"import json; m = json.load(open('" + manifest + "')); m['format'] = 1; " +
           "json.dump(m, open('" + manifest + "', 'w'))\"",
       "is not a baton-checkpoint-2 manifest"},
      {"one rank and no files", manifest,
       python + "\"import json; m = json.load(open('" + manifest +
           "')); m['world_size'] = 1; del m['files']; json.dump(m, open('" + manifest +
           "', 'w'))\"",
       "' has no list of files (damaged?)"},
      {"a size that is text", manifest,
       python + "\"import json; m = json.load(open('" + manifest +
           "')); m['ranks'][0]['files']['rank0.pt']['bytes'] = 'many'; json.dump(m, open('" +
           manifest + "', 'w'))\"",
       "file rank0.pt has no size and checksum"},
      // Issue 48: the format edited to 1 skipped every checksum; a step edited 4 -> 6 made
      // --resume skip steps; a sparse 16 GiB rank file was read whole (4.3 GB, bad_alloc).
      {"a format downgraded over a wrong checksum", manifest,
       python + "\"import json; m = json.load(open('" + manifest +
           "')); m['format'] = 'baton-checkpoint-1'; "
           "m['ranks'][0]['files']['rank0.pt']['checksum'] = '0000000000000000'; "
           "json.dump(m, open('" +
           manifest + "', 'w'))\"",
       "checkpoint file '" + rank0 + "' has checksum "},
      {"a step edited", manifest,
       python + "\"import json; m = json.load(open('" + manifest + "')); m['step'] = 6; " +
           "json.dump(m, open('" + manifest + "', 'w'))\"",
       "says step 6, its folder is step-000004"},
      {"a sparse 16 GiB rank file", rank1, "truncate -s 16G '" + rank1 + "'",
       "checkpoint file '" + rank1 + "' has 17179869184 bytes, the manifest says "},
  };
  for (const Damage& damage : damages) {
    backup(damage.file);
    const auto damaged = baton_test::run_command(damage.command);
    ASSERT_EQ(damaged.exit_code, 0) << damage.what << "\n" << damaged.output;
    // Export of that step: refused, naming the problem and the checkpoint that does verify.
    const auto exported = export_of(step4);
    EXPECT_NE(exported.exit_code, 0) << damage.what << "\n" << exported.output;
    EXPECT_THAT(exported.output, HasSubstr(damage.message)) << damage.what;
    EXPECT_THAT(exported.output, HasSubstr("the newest checkpoint that verifies is " + step2))
        << damage.what << "\n"
        << exported.output;
    EXPECT_THAT(exported.output, testing::Not(HasSubstr("json.exception"))) << damage.what;
    // Export of the folder, and resume: the newest that verifies, saying which and why.
    const auto from_folder = export_of(checkpoints);
    EXPECT_EQ(from_folder.exit_code, 0) << damage.what << "\n" << from_folder.output;
    EXPECT_THAT(from_folder.output, HasSubstr("exporting " + step2)) << damage.what;
    EXPECT_THAT(from_folder.output, HasSubstr("skipping " + step4)) << damage.what;
    restore(damage.file);
  }
  // Bit flip again, then --resume: it goes on from step 2, as an uninterrupted run would.
  backup(rank0);
  ASSERT_EQ(baton_test::run_command(damages[2].command).exit_code, 0);
  auto resume_settings = settings;
  resume_settings.push_back("run.steps=6");
  const auto resumed = baton_test::run_command(command_line(resume_settings, "--resume"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output,
              HasSubstr("skipping " + step4 + ": checkpoint file '" + rank0 + "' has checksum "));
  EXPECT_THAT(resumed.output, HasSubstr("resuming after step 2 from " + step2));
}

// A rank killed in the middle of writing a checkpoint (its parameters written, its optimizer
// state not, no manifest): the previous complete checkpoint is what --resume and export use.
TEST(Checkpoint, ARankKilledWhileWritingACheckpointLeavesThePreviousOneInUse) {
  const std::string root = ::testing::TempDir() + "/checkpoint-killed-writing";
  baton_test::run_command("rm -rf '" + root + "'");
  auto settings = run_settings(root);
  const auto killed = baton_test::run_command(
      "BATON_INJECT_FAILURE=rank=1,step=4,action=kill_in_checkpoint " + command_line(settings, ""));
  EXPECT_NE(killed.exit_code, 0) << killed.output;
  EXPECT_THAT(killed.output, HasSubstr("launch: rank 1 failed first (killed by signal Killed)"));
  const std::string checkpoints = root + "/ckpt/checkpoints";
  EXPECT_TRUE(std::filesystem::exists(checkpoints + "/step-000004/rank1.pt"));
  EXPECT_FALSE(std::filesystem::exists(checkpoints + "/step-000004/rank1.optim"));
  EXPECT_FALSE(std::filesystem::exists(checkpoints + "/step-000004/manifest.json"));

  const auto exported = baton_test::run_command(kBaton + " export '" + checkpoints + "' --out '" +
                                                root + "/model.pt'");
  EXPECT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("ranks of " + checkpoints + "/step-000002"));
  const auto resumed = baton_test::run_command(command_line(settings, "--resume"));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output,
              HasSubstr("resuming after step 2 from " + checkpoints + "/step-000002"));
}

// `baton export` writes only files it makes: never into a checkpoint, never over a file that
// is not an earlier export (a user's notes, or a zip: a stage file, photos.zip — issue 48
// found "PK" was the only test); by default next to the checkpoints, in the run's folder.
TEST(Checkpoint, ExportWritesOnlyFilesItMakes) {
  const std::string root = ::testing::TempDir() + "/checkpoint-export-target";
  baton_test::run_command("rm -rf '" + root + "'");
  auto settings = run_settings(root);
  settings.push_back("run.steps=2");
  const auto run = baton_test::run_command(command_line(settings, ""));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string step = root + "/ckpt/checkpoints/step-000002";
  const auto inside =
      baton_test::run_command(kBaton + " export '" + step + "' --out '" + step + "/model.pt'");
  EXPECT_NE(inside.exit_code, 0) << inside.output;
  EXPECT_THAT(inside.output, HasSubstr("is inside a checkpoint"));
  EXPECT_FALSE(std::filesystem::exists(step + "/model.pt"));

  const std::string notes = root + "/notes.txt";
  std::ofstream(notes) << "my notes\n";
  const auto over =
      baton_test::run_command(kBaton + " export '" + step + "' --out '" + notes + "'");
  EXPECT_NE(over.exit_code, 0) << over.output;
  EXPECT_THAT(over.output, HasSubstr("exists and is not an export baton wrote"));
  EXPECT_EQ(baton_test::run_command("cat '" + notes + "'").output, "my notes\n");
  const std::string archive = root + "/photos.zip";
  ASSERT_EQ(baton_test::run_command("cp '" + step + "/rank0.pt' '" + archive + "'").exit_code, 0);
  const auto over_zip =
      baton_test::run_command(kBaton + " export '" + step + "' --out '" + archive + "'");
  EXPECT_NE(over_zip.exit_code, 0) << over_zip.output;
  EXPECT_THAT(over_zip.output, HasSubstr("exists and is not an export baton wrote"));
  EXPECT_EQ(baton_test::run_command("cmp '" + step + "/rank0.pt' '" + archive + "'").exit_code, 0);

  // The default, twice: an earlier export is replaced.
  for (int i = 0; i < 2; ++i) {
    const auto exported = baton_test::run_command(kBaton + " export '" + step + "'");
    EXPECT_EQ(exported.exit_code, 0) << exported.output;
    EXPECT_THAT(exported.output, HasSubstr("to " + root + "/ckpt/model-step-000002.pt"));
  }
}

}  // namespace

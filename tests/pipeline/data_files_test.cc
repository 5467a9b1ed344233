// Data from files written by Python: tensors (.npy from numpy.save, .pt from torch.save)
// feed a pipelined run that matches plain PyTorch reading the same files, and token
// files in every documented format read back as the same stream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "baton/error.h"
#include "launch_run.h"
#include "tensor_files.h"
#include "torch_reference.h"

namespace {

using testing::HasSubstr;

// Writes the files with Debian's python3 (numpy and torch); false when it cannot.
bool write_with_python(const std::string& dir, std::string* output) {
  const std::string script =
      "import numpy as np, torch\n"
      "g = torch.Generator().manual_seed(1)\n"
      "x = torch.randn(24, 8, generator=g)\n"
      "np.save('" +
      dir +
      "/inputs.npy', x.numpy())\n"
      "torch.save(torch.randint(0, 3, (24,), generator=g), '" +
      dir +
      "/targets.pt')\n"
      "np.save('" +
      dir +
      "/values.npy', torch.randn(24, 3, generator=g).numpy())\n"
      "tokens = np.array([5, 1, 65535, 300, 7], dtype=np.uint16)\n"
      "np.save('" +
      dir +
      "/tokens_u16.npy', tokens)\n"
      "tokens.tofile('" +
      dir +
      "/tokens.u16')\n"
      "tokens.astype(np.int32).tofile('" +
      dir +
      "/tokens.i32')\n"
      "np.save('" +
      dir + "/tokens_i64.npy', tokens.astype(np.int64))\n";
  std::ofstream(dir + "/write.py") << script;
  const auto result =
      baton_test::run_command(std::string(BATON_PYTHON) + " '" + dir + "/write.py'");
  *output = result.output;
  return result.exit_code == 0;
}

class DataFiles : public testing::Test {
 protected:
  void SetUp() override {
    // A folder per test: CTest runs the cases in parallel processes.
    dir_ = ::testing::TempDir() + "/data-files-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    baton_test::run_command("rm -rf '" + dir_ + "' && mkdir -p '" + dir_ + "'");
    std::string output;
    // scripts/bootstrap test installs python3-torch: writing the files must work.
    ASSERT_TRUE(write_with_python(dir_, &output))
        << "python3 with numpy and torch is needed (python3-torch): " << output;
  }
  std::string dir_;
};

TEST_F(DataFiles, TokenFilesInEveryFormatReadTheSameStream) {
  const std::vector<std::int64_t> expected{5, 1, 65535, 300, 7};
  for (const auto& [file, format] : std::vector<std::pair<std::string, baton_models::TokenFormat>>{
           {"tokens_u16.npy", baton_models::TokenFormat::kBySuffix},
           {"tokens_i64.npy", baton_models::TokenFormat::kNpy},
           {"tokens.u16", baton_models::TokenFormat::kUint16},
           {"tokens.i32", baton_models::TokenFormat::kInt32}}) {
    const at::Tensor tokens =
        baton_models::read_token_file(dir_ + "/" + file, format, "data.tokens");
    ASSERT_EQ(tokens.numel(), 5) << file;
    for (int i = 0; i < 5; ++i) EXPECT_EQ(tokens[i].item<std::int64_t>(), expected[i]) << file;
  }
  try {
    baton_models::read_token_file(dir_ + "/tokens.u16", baton_models::TokenFormat::kInt32,
                                  "data.tokens");
    ADD_FAILURE() << "10 bytes read as int32 tokens";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("10 bytes is not a whole number of int32 tokens"));
  }
}

std::vector<std::string> file_run(const std::string& dir, const std::string& targets) {
  return {"model.name=mlp",
          "model.params.in_features=8",
          "model.params.hidden=16",
          "model.params.layers=2",
          "model.params.out_features=3",
          "data.source=files",
          "data.inputs=" + dir + "/inputs.npy",
          "data.targets=" + dir + "/" + targets,
          "data.batch_size=8",
          "schedule.name=gpipe",
          "schedule.microbatches=4",
          "optimizer.name=sgd",
          "optimizer.lr=0.1",
          "run.steps=4",  // step 4 wraps around the 24 rows: rows 0..7 again
          "run.seed=2",
          "world.timeout_s=30"};
}

TEST_F(DataFiles, NpyInputsAndPtTargetsTrainLikePlainPyTorch) {
  const auto settings = file_run(dir_, "targets.pt");
  const auto result = baton_test::launch(BATON_BINARY, 2, settings, "data-files");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  // The reference reads the rows with numpy and torch.load, not with baton's readers.
  const auto reference = baton_test::compare_with_torch(result, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

TEST_F(DataFiles, FloatTargetsTrainWithMseLikePlainPyTorch) {
  auto settings = file_run(dir_, "values.npy");
  settings.push_back("model.loss=mse");
  settings.push_back("optimizer.name=adam");
  settings.push_back("optimizer.lr=0.01");
  const auto result = baton_test::launch(BATON_BINARY, 2, settings, "data-files-mse");
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;
  const auto reference = baton_test::compare_with_torch(result, 2, settings);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
}

TEST_F(DataFiles, MismatchedRowCountsAreRefusedNamingBoth) {
  std::string output;
  const auto result =
      baton_test::run_command(std::string(BATON_PYTHON) + " -c \"import numpy as np; np.save('" +
                              dir_ + "/short.npy', np.zeros((5,), dtype=np.int64))\"");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto run = baton_test::run_command(
      std::string(BATON_BINARY) + " run --no-env --set model.name=mlp --set data.source=files" +
      " --set data.inputs=" + dir_ + "/inputs.npy --set data.targets=" + dir_ + "/short.npy" +
      " --set world.ranks=1 --set data.batch_size=4 --set schedule.microbatches=1" +
      " --set run.output_dir=" + dir_ + "/runs");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("data.inputs: '" + dir_ +
                                    "/inputs.npy' has 24 samples but data.targets has 5"));
}

// Damaged or hostile .npy files: each is refused naming the file and what is wrong — never a
// std::out_of_range from deep in the parser, a crash, or an allocation of what the header
// claims.
TEST(DamagedDataFiles, AreRefusedNamingTheFileAndTheProblem) {
  const std::string dir = ::testing::TempDir();
  auto npy = [](const std::string& header) {
    std::string bytes = "\x93NUMPY\x01";
    bytes += '\0';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    return bytes + header;
  };
  std::string claims_long_header = "\x93NUMPY\x01";
  claims_long_header += '\0';
  claims_long_header += "\xff\xff{'descr': '<f4'";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not a NumPy .npy file"},
      {"random bytes that are not numpy at all", "not a NumPy .npy file"},
      {claims_long_header, "the .npy header claims 65535 bytes"},
      {npy("{'descr': '<f4', 'fortran_order': False, }"), "has no readable 'shape'"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, x), }"),
       "has a dimension that is not a size: 'x'"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }"),
       "has a dimension that is not a size: '-3'"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }") +
           std::string(64, '\0'),
       "needs more data than the file's 64 bytes"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }") + std::string(8, '\0'),
       "needs more data than the file's 8 bytes after the header"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }") + std::string(2, '\0'),
       "shorter than its header's shape says"},
      {npy("{'fortran_order': False, 'shape': (4,), }"), "has no readable 'descr'"},
      {npy("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }") + std::string(16, '\0'),
       "NumPy dtype '<c16' is not supported"},
      {npy("{'descr"), "has no readable 'descr'"},
  };
  int index = 0;
  for (const auto& [bytes, expected] : cases) {
    const std::string path = dir + "/damaged-" + std::to_string(index++) + ".npy";
    std::ofstream(path, std::ios::binary) << bytes;
    try {
      baton_models::read_tensor_file(path, "data.inputs");
      ADD_FAILURE() << path << " was read";
    } catch (const baton::ConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr(path)) << expected;
      EXPECT_THAT(error.what(), HasSubstr(expected)) << path;
    } catch (const std::exception& error) {
      ADD_FAILURE() << path << ": not a ConfigError: " << error.what();
    }
  }
}

TEST(DamagedDataFiles, NegativeTokenIdsAreRefusedNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/negative.i32";
  {
    std::ofstream file(path, std::ios::binary);
    for (std::int32_t i = 0; i < 200; ++i) {
      const std::int32_t token = i == 77 ? -5 : i % 200;
      file.write(reinterpret_cast<const char*>(&token), sizeof(token));
    }
  }
  const auto run = baton_test::run_command(
      std::string(BATON_BINARY) + " run --no-env --set world.ranks=1 --set run.steps=1" +
      " --set run.output_dir=" + ::testing::TempDir() + "/negative-token-runs" +
      " --set data.tokens=" + path + " --set data.token_format=int32" +
      " --set model.params.seq_len=8 --set data.batch_size=4 --set schedule.microbatches=1");
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("data.tokens ('" + path + "'): holds a negative token id (-5)"));
}

}  // namespace

namespace {

std::string file_run_line(const std::vector<std::string>& settings) {
  std::string command = "timeout -k 5 60 " + std::string(BATON_BINARY) +
                        " run --no-env --set world.ranks=1" +
                        " --set run.output_dir=" + ::testing::TempDir() + "/refused-data-runs";
  for (const auto& setting : settings) command += " --set '" + setting + "'";
  return command;
}

// Data that is not a file (a FIFO would block past world.timeout_s, /dev/zero never end) and
// inputs holding nan are refused when read, naming the file and the first bad row.
TEST_F(DataFiles, FifosDevicesAndNonFiniteInputsAreRefusedWhenRead) {
  const std::string fifo = dir_ + "/inputs.fifo";
  ASSERT_EQ(baton_test::run_command("mkfifo '" + fifo + "'").exit_code, 0);
  auto settings = file_run(dir_, "targets.pt");
  settings.push_back("data.inputs=" + fifo);
  const auto from_fifo = baton_test::run_command(file_run_line(settings));
  EXPECT_NE(from_fifo.exit_code, 0) << from_fifo.output;
  EXPECT_THAT(from_fifo.output, HasSubstr("data.inputs: '" + fifo +
                                          "' is a FIFO (a named pipe); baton reads only regular"));

  const auto tokens = baton_test::run_command(
      file_run_line({"data.source=text", "data.tokens=/dev/zero", "data.token_format=bytes"}));
  EXPECT_NE(tokens.exit_code, 0) << tokens.output;
  EXPECT_THAT(tokens.output, HasSubstr("data.tokens: '/dev/zero' is a character device"));

  const auto wrote = baton_test::run_command(
      std::string(BATON_PYTHON) + " -c \"import numpy as np; x = np.load('" + dir_ +
      "/inputs.npy'); x[3, 1] = np.nan; np.save('" + dir_ + "/nan_inputs.npy', x)\"");
  ASSERT_EQ(wrote.exit_code, 0) << wrote.output;
  settings = file_run(dir_, "targets.pt");
  settings.push_back("data.inputs=" + dir_ + "/nan_inputs.npy");
  const auto with_nan = baton_test::run_command(file_run_line(settings));
  EXPECT_NE(with_nan.exit_code, 0) << with_nan.output;
  EXPECT_THAT(with_nan.output, HasSubstr("nan_inputs.npy' holds non-finite values (nan or inf), "
                                         "first in row 3"));
}

}  // namespace

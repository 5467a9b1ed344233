#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "baton/validator.h"

namespace {

using testing::HasSubstr;

std::string check_message(const std::string& validator, const torch::Tensor& tensor,
                          const baton::TensorMeta& expected, baton::TensorRole role,
                          int stage = 0) {
  auto v = baton::make_builtin_validator(validator);
  baton::TensorCheck where{stage, 3, role, 0, &expected};
  try {
    v->check(tensor, where);
  } catch (const baton::ValidationError& error) {
    return error.what();
  }
  return "ok";
}

baton::TensorMeta meta(std::vector<int64_t> shape, at::ScalarType dtype = at::kFloat) {
  baton::TensorMeta m;
  m.shape = std::move(shape);
  m.dtype = dtype;
  return m;
}

TEST(Validators, ShapeDtypeNamesStageRoleMicrobatchAndBothShapes) {
  EXPECT_EQ(check_message("shape_dtype", torch::zeros({9, 512}), meta({8, 512}),
                          baton::TensorRole::kForwardInput),
            "stage 0 forward input 0 (microbatch 3): shape mismatch: expected [8, 512] float32, "
            "got [9, 512] float32");
  EXPECT_THAT(check_message("shape_dtype", torch::zeros({8, 512}, torch::kDouble), meta({8, 512}),
                            baton::TensorRole::kForwardOutput, 2),
              HasSubstr("stage 2 forward output 0 (microbatch 3): dtype mismatch: expected "
                        "[8, 512] float32, got [8, 512] float64"));
  EXPECT_EQ(check_message("shape_dtype", torch::zeros({8, 512}), meta({8, 512}),
                          baton::TensorRole::kForwardOutput),
            "ok");
}

TEST(Validators, StrictAlsoChecksContiguity) {
  const torch::Tensor transposed = torch::zeros({4, 8}).t();
  EXPECT_EQ(
      check_message("shape_dtype", transposed, meta({8, 4}), baton::TensorRole::kForwardOutput),
      "ok");
  EXPECT_THAT(check_message("strict", transposed, meta({8, 4}), baton::TensorRole::kForwardOutput),
              HasSubstr("not contiguous: got [8, 4] float32, strides [1, 8], cpu"));
}

TEST(Validators, FiniteCountsNanAndInf) {
  torch::Tensor t = torch::zeros({2, 2});
  t[0][0] = std::numeric_limits<float>::infinity();
  t[1][1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(check_message("finite", t, meta({2, 2}), baton::TensorRole::kForwardOutput),
              HasSubstr("2 of 4 values are not finite (1 NaN, 1 Inf)"));
  EXPECT_EQ(
      check_message("finite", torch::ones({2, 2}), meta({2, 2}), baton::TensorRole::kForwardOutput),
      "ok");
}

TEST(Validators, BuiltinNames) {
  EXPECT_EQ(baton::builtin_validator_names(),
            (std::vector<std::string>{"shape_dtype", "strict", "finite", "off"}));
  EXPECT_EQ(baton::make_builtin_validator("nonsense"), nullptr);
}

}  // namespace

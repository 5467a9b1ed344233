// The setup handshake's tensor descriptions: what encodes decodes to the same, and a damaged
// or hostile message is refused with baton::Error before anything is allocated from it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "baton/error.h"
#include "baton/tensor_meta.h"

namespace {

using testing::HasSubstr;

std::string error_of(const std::vector<std::int64_t>& encoded) {
  try {
    baton::decode_metas(encoded);
  } catch (const baton::Error& error) {
    return error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "not a baton::Error: " << error.what();
    return {};
  }
  ADD_FAILURE() << "accepted";
  return {};
}

// Shapes and dtypes cross; the device does not: each side places its buffers on its own
// (a sender's cuda:3 is not its receiver's).
TEST(TensorMetaCodec, RoundTripsShapesAndDtypesOntoTheReceiversDevice) {
  const std::vector<baton::TensorMeta> metas = {
      baton::TensorMeta::of(at::zeros({8, 512}, at::kFloat)),
      baton::TensorMeta::of(at::zeros({3}, at::kLong)), baton::TensorMeta::of(at::zeros({}))};
  const auto encoded = baton::encode_metas(metas);
  EXPECT_EQ(encoded.size(), 1u + (2 + 2) + (2 + 1) + (2 + 0));
  const auto decoded = baton::decode_metas(encoded);
  ASSERT_EQ(decoded.size(), metas.size());
  for (std::size_t i = 0; i < metas.size(); ++i) {
    EXPECT_EQ(decoded[i].shape, metas[i].shape);
    EXPECT_EQ(decoded[i].dtype, metas[i].dtype);
    EXPECT_EQ(decoded[i].device, c10::Device(c10::kCPU));
  }
  const c10::Device gpu(c10::kCUDA, 3);
  for (const auto& meta : baton::decode_metas(encoded, gpu)) EXPECT_EQ(meta.device, gpu);
}

// A dtype crosses as baton's own code for its name, never as LibTorch's ScalarType number
// (which two LibTorch builds may number otherwise): the codes are a list only appended to.
TEST(TensorMetaCodec, DtypesTravelAsBatonsCodesForTheirNames) {
  const std::vector<std::pair<at::ScalarType, std::int64_t>> codes = {
      {at::kFloat, 1}, {at::kDouble, 2}, {at::kHalf, 3},          {at::kBFloat16, 4},
      {at::kByte, 5},  {at::kChar, 6},   {at::kShort, 7},         {at::kInt, 8},
      {at::kLong, 9},  {at::kBool, 10},  {at::kComplexFloat, 11}, {at::kComplexDouble, 12}};
  for (const auto& [dtype, code] : codes) {
    const auto encoded = baton::encode_metas({baton::TensorMeta::of(at::zeros({2}, dtype))});
    EXPECT_EQ(encoded.at(1), code) << c10::toString(dtype);
    EXPECT_EQ(baton::decode_metas(encoded).at(0).dtype, dtype) << c10::toString(dtype);
  }
  baton::TensorMeta quantized;
  quantized.dtype = at::kQInt8;
  quantized.shape = {2};
  std::string message;
  try {
    baton::encode_metas({quantized});
  } catch (const baton::Error& error) {
    message = error.what();
  }
  EXPECT_THAT(message, HasSubstr("dtype QInt8 cannot cross between ranks"));
  EXPECT_THAT(message, HasSubstr("float32, float64, float16, bfloat16"));
}

TEST(TensorMetaCodec, DamagedMessagesAreRefused) {
  const std::int64_t float32 = 1;
  EXPECT_THAT(error_of({}), HasSubstr("end in the middle"));
  EXPECT_THAT(error_of({-1}), HasSubstr("count -1"));
  EXPECT_THAT(error_of({1, 999, 1, 4}), HasSubstr("dtype code 999 is none of baton's (1 to 12"));
  EXPECT_THAT(error_of({1, -3, 1, 4}), HasSubstr("dtype code -3"));
  EXPECT_THAT(error_of({1, 0, 1, 4}), HasSubstr("dtype code 0"));
  EXPECT_THAT(error_of({1, float32, 65, 4}), HasSubstr("rank 65"));
  EXPECT_THAT(error_of({1, float32, 1, -4}), HasSubstr("dimension 0 is -4"));
  EXPECT_THAT(error_of({1, float32, 2, 1 << 30, 1 << 30}),
              HasSubstr("more than 2^40 elements (dimension 1 is 1073741824)"));
  EXPECT_THAT(error_of({1, float32, 1, 4, 9}), HasSubstr("trailing values"));
}

}  // namespace

#include "precision_dtypes.h"

namespace baton_app {

std::optional<c10::ScalarType> autocast_dtype(ComputePrecision compute) {
  switch (compute) {
    case ComputePrecision::kBf16:
      return c10::kBFloat16;
    case ComputePrecision::kFp16:
      return c10::kHalf;
    case ComputePrecision::kFp32:
      break;
  }
  return std::nullopt;
}

std::optional<c10::ScalarType> wire_dtype(WirePrecision wire) {
  switch (wire) {
    case WirePrecision::kFp32:
      return c10::kFloat;
    case WirePrecision::kBf16:
      return c10::kBFloat16;
    case WirePrecision::kFp16:
      return c10::kHalf;
    case WirePrecision::kAuto:
      break;
  }
  return std::nullopt;
}

std::optional<c10::ScalarType> reduce_dtype(ReducePrecision reduce) {
  if (reduce == ReducePrecision::kBf16) return c10::kBFloat16;
  return std::nullopt;
}

}  // namespace baton_app

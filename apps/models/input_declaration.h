// One input of a user's model as model.params.inputs declares it: "int64[32]<256" (token ids
// of 32 positions below 256), "bool[32]" (a mask), "float32[3, 64]". Parsed without LibTorch
// so `baton config check` refuses a bad one before anything starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace baton_models {

struct InputDeclaration {
  std::string dtype;                // float32, float64, float16, bfloat16, int64, int32, ...
  std::vector<std::int64_t> shape;  // one sample, without the batch dimension
  std::int64_t high = 0;            // integer inputs: synthetic values in [0, high); 0: unset
};

// The dtypes a declaration may name, in the order the error lists them.
const std::vector<std::string>& input_dtype_names();

// Throws baton::ConfigError starting with `where` and saying what the text should look like.
InputDeclaration parse_input_declaration(const std::string& text, const std::string& where);

// "int64[32]<256": the text parse_input_declaration() reads back.
std::string format_input_declaration(const InputDeclaration& declaration);

}  // namespace baton_models

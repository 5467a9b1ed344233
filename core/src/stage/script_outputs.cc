#include "script_outputs.h"

#include "baton/error.h"

namespace baton {

std::vector<at::Tensor> script_outputs_to_tensors(const c10::IValue& value,
                                                  const std::string& where) {
  if (value.isTensor()) return {value.toTensor()};
  if (value.isTuple()) {
    std::vector<at::Tensor> tensors;
    for (const auto& element : value.toTupleRef().elements()) {
      if (!element.isTensor()) {
        throw Error(where + " returned a tuple holding a " + element.tagKind() +
                    "; stages may only pass tensors");
      }
      tensors.push_back(element.toTensor());
    }
    return tensors;
  }
  throw Error(where + " returned a " + value.tagKind() +
              "; stages may only pass tensors (one, or a tuple of them)");
}

}  // namespace baton

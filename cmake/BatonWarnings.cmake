# Warnings are errors on the project's own code. Third-party headers (LibTorch, yaml-cpp,
# gloo, UCX) come in through imported targets and are treated as system headers.
function(baton_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter)
endfunction()

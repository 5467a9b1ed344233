# Every fuzz target (tests/fuzz/fuzz_<name>.cc): built by tests/fuzz/CMakeLists.txt, run by
# CTest as Fuzz.<name> (tests/CMakeLists.txt), or listed as skipped with the reason where
# clang's libFuzzer is missing.
set(BATON_FUZZ_TARGETS action_parser plan_csv config_yaml npy_header store_protocol store_socket
                       checkpoint_manifest model_profile)

# Precompiled headers (issue 43): the heavy headers every file of a target includes are parsed once per
# target, not once per file. nlohmann/json.hpp is about 25,000 lines that nearly every engine, panel and test
# file reached through core/json_doc.h; with GoogleTest it was about 40 % of a test file's compile time
# (2.4 s of 5.6 s for tests/unit/train_run_options_test.cpp, GCC 12 -O3, measured by compiling the headers
# alone). Only third-party and standard headers go in: a project header missing an include of its own still
# fails to compile in the targets without one (the CUDA library, the fuzz harnesses) and with -DMC_PCH=OFF.
#
#   mc_precompile(mc_unit_tests <gtest/gtest.h> <nlohmann/json.hpp>)
#   mc_test_files(mc_unit_tests)   # a test program's own files at -O1 in an optimised build
option(MC_PCH "Precompile the heavy third-party headers once per target (nlohmann_json, GoogleTest, ImGui)" ON)

function(mc_precompile target)
  if(NOT MC_PCH)
    return()
  endif()
  set(headers "")
  foreach(h IN LISTS ARGN)
    # C++ files only: a target may hold CUDA or C sources that must not see a C++ precompiled header.
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:${h}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# A test program's own files (its checks) at -O1 when the build optimises harder: the engine and panels they
# call keep the build's -O3, so the tests run at nearly the same speed, while a test file's -O3 code
# generation was over half its compile (8.3 s of 14.9 s for tests/ui/address_ui_test.cpp). The target's
# precompiled header is built with the same flag.
function(mc_test_files target)
  if(CMAKE_BUILD_TYPE STREQUAL "Release" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
  endif()
endfunction()

# Emscripten (Debian's 3.1.6) settings. Each line answers a pitfall recorded in docs/TOOLCHAIN.md.
# Debian's node (or the machine's) does not search /usr/share/nodejs, where emcc's acorn lives.
set(CMAKE_C_LINKER_LAUNCHER ${CMAKE_COMMAND} -E env NODE_PATH=/usr/share/nodejs)
set(CMAKE_CXX_LINKER_LAUNCHER ${CMAKE_COMMAND} -E env NODE_PATH=/usr/share/nodejs)
# emcmake's default emulator passes a flag node 20 rejects.
find_program(MC_NODE node REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${MC_NODE})

# Never put /usr/include on the wasm include path (glibc clashes with emscripten's libc): a folder of
# symlinks exposes only the header-only libraries we use.
set(MC_WASM_SYSINC ${CMAKE_BINARY_DIR}/wasm-sysinc)
file(MAKE_DIRECTORY ${MC_WASM_SYSINC})
if(NOT EXISTS ${MC_WASM_SYSINC}/nlohmann)
  file(CREATE_LINK /usr/include/nlohmann ${MC_WASM_SYSINC}/nlohmann SYMBOLIC)
endif()
# stb (libstb-dev): the PNG encoder (engine/core/png.cpp) and the PNG chart's font (ui/panels/lab_png.cpp).
if(NOT EXISTS ${MC_WASM_SYSINC}/stb)
  file(CREATE_LINK /usr/include/stb ${MC_WASM_SYSINC}/stb SYMBOLIC)
endif()
add_library(mc_wasm_thirdparty INTERFACE)
target_include_directories(mc_wasm_thirdparty SYSTEM INTERFACE /usr/include/eigen3 ${MC_WASM_SYSINC})
add_library(Eigen3::Eigen ALIAS mc_wasm_thirdparty)
add_library(nlohmann_json::nlohmann_json ALIAS mc_wasm_thirdparty)

# nlohmann_json throws; without -fexceptions every throw aborts.
add_compile_options(-fexceptions -msimd128)
add_link_options(-fexceptions)

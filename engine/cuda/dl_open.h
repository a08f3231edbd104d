// dl_open.h - opening a shared library of the CUDA toolkit at run time (cuBLAS, NCCL ship only as shared
// libraries; opening them on first use lets the binaries start on machines without the toolkit).
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace mc::cuda {

// The first of `names` that dlopen loads, or nullptr with every attempt's error in *errors ("; "-joined).
inline void* dl_open_first(std::initializer_list<const char*> names, std::string* errors) {
  for (const char* name : names) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* e = dlerror();
    *errors += std::string(errors->empty() ? "" : "; ") + (e ? e : name);
  }
  return nullptr;
}

// Looks `name` up in `lib` into the function pointer `f`; false when it is missing.
template <class F>
bool dl_symbol(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

}  // namespace mc::cuda

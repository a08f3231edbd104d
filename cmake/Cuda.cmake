# Optional CUDA: compiled when nvcc is found, never required. CUDA 13 dropped sm_70 (V100), so the
# oldest architecture we can build for is 75; `native` would fail on a machine with no GPU.
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  # Machine code for Turing (75), Ampere (80) and Hopper (90). A cubin runs on later minor versions of its
  # major one (CUDA C++ Programming Guide, "Binary Compatibility"), so sm_86 and sm_89 GPUs run the 80 code;
  # building them too cost 2/5 of the CUDA compile (train_kernels.cu 90 s on two cores) for nothing used.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 75 80 90)
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(MC_HAVE_CUDA ON)
  message(STATUS "megacluster: CUDA ${CMAKE_CUDA_COMPILER_VERSION} found; building the CUDA library")
else()
  set(MC_HAVE_CUDA OFF)
  message(STATUS "megacluster: nvcc not found; CPU only")
endif()

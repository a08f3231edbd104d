// blas_lt.cu - see blas_lt.h. Row-major y = x w + b is, in cuBLASLt's column-major terms,
// y^T (M x N) = w^T (M x K) x^T (K x N) + b: A = w (M x K, ld M), B = x (K x N, ld K), D = y (M x N, ld M),
// and the epilogue's bias runs along D's M rows, one value per output feature.
//
// Sections: the library's entry points; a plan per (precision, N, K, M): descriptors and the heuristic's
// first algorithm, made once; linear_bias.
#include "cuda/blas_lt.h"
#include "cuda/dl_open.h"

#include <cublasLt.h>

#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

namespace mc::cuda {

// ---- entry points ----
struct BlasLt::Impl {
  void* lib = nullptr;
  bool usable = false;
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  cublasLtHandle_t handle = nullptr;

  // ---- plans ----
  struct Plan {
    bool ok = false;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
  };
  // Keyed by (precision, N, K, M, alignment of x, w, y in bytes); never freed (a model has a few shapes).
  std::map<std::tuple<int, int, int, int, int, int, int>, Plan> plans;

  Plan& plan(int precision, int N, int K, int M, int ax, int aw, int ay, const float* bias) {
    auto [it, fresh] = plans.try_emplace({precision, N, K, M, ax, aw, ay});
    Plan& p = it->second;
    if (!fresh) return p;
    const cudaDataType ab = precision == 2 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = precision == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (desc_create(&p.desc, compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return p;
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType bias_type = CUDA_R_32F;
    if (desc_set(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) != CUBLAS_STATUS_SUCCESS ||
        desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type) != CUBLAS_STATUS_SUCCESS ||
        desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) != CUBLAS_STATUS_SUCCESS)
      return p;
    if (layout_create(&p.a, ab, uint64_t(M), uint64_t(K), M) != CUBLAS_STATUS_SUCCESS ||
        layout_create(&p.b, ab, uint64_t(K), uint64_t(N), K) != CUBLAS_STATUS_SUCCESS ||
        layout_create(&p.d, CUDA_R_32F, uint64_t(M), uint64_t(N), M) != CUBLAS_STATUS_SUCCESS)
      return p;
    cublasLtMatmulPreference_t pref = nullptr;
    if (pref_create(&pref) != CUBLAS_STATUS_SUCCESS) return p;
    const uint64_t ws = uint64_t(kWorkspaceBytes);
    // Tensors sit at any float offset of a worker's arena: tell the heuristic how aligned they are, so it
    // picks no algorithm that needs more (the default assumes 256 bytes).
    const uint32_t align_a = uint32_t(aw), align_b = uint32_t(ax), align_d = uint32_t(ay);
    if (pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) != CUBLAS_STATUS_SUCCESS ||
        pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a, sizeof align_a) != CUBLAS_STATUS_SUCCESS ||
        pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b, sizeof align_b) != CUBLAS_STATUS_SUCCESS ||
        pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_d, sizeof align_d) != CUBLAS_STATUS_SUCCESS ||
        pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d, sizeof align_d) != CUBLAS_STATUS_SUCCESS) {
      pref_destroy(pref);
      return p;
    }
    cublasLtMatmulHeuristicResult_t found{};
    int count = 0;
    if (heuristic(handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &found, &count) == CUBLAS_STATUS_SUCCESS && count > 0) {
      p.algo = found.algo;
      p.ok = true;
    }
    pref_destroy(pref);
    return p;
  }
};

// The largest power of two, up to 256, that divides the address.
static int alignment(const void* p) {
  const uintptr_t a = uintptr_t(p);
  int k = 1;
  while (k < 256 && a % uintptr_t(2 * k) == 0) k *= 2;
  return k;
}

template <class F>
static bool sym(void* lib, const char* name, F& f) {
  return dl_symbol(lib, name, f);
}

BlasLt::BlasLt() : impl_(new Impl) {
  Impl& i = *impl_;
  // MC_CUBLASLT=off keeps the two-pass bias (to measure one against the other).
  const char* off = std::getenv("MC_CUBLASLT");
  if (off && std::string(off) == "off") return;
  std::string errors;
  i.lib = dl_open_first({"libcublasLt.so.13", "libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so.13"}, &errors);
  if (!i.lib) return;
  const bool all = sym(i.lib, "cublasLtCreate", i.create) && sym(i.lib, "cublasLtDestroy", i.destroy) &&
                   sym(i.lib, "cublasLtMatmulDescCreate", i.desc_create) &&
                   sym(i.lib, "cublasLtMatmulDescSetAttribute", i.desc_set) &&
                   sym(i.lib, "cublasLtMatrixLayoutCreate", i.layout_create) &&
                   sym(i.lib, "cublasLtMatmulPreferenceCreate", i.pref_create) &&
                   sym(i.lib, "cublasLtMatmulPreferenceSetAttribute", i.pref_set) &&
                   sym(i.lib, "cublasLtMatmulPreferenceDestroy", i.pref_destroy) &&
                   sym(i.lib, "cublasLtMatmulAlgoGetHeuristic", i.heuristic) && sym(i.lib, "cublasLtMatmul", i.matmul);
  i.usable = all && i.create(&i.handle) == CUBLAS_STATUS_SUCCESS;
}

BlasLt::~BlasLt() = default;  // contexts live for the process (train_kernels.cu): nothing is torn down

// ---- linear_bias ----
bool BlasLt::linear_bias(int precision, float* y, const void* x, const void* w, const float* bias, int N, int K, int M,
                         void* workspace) {
  Impl& i = *impl_;
  if (!i.usable || !bias || N <= 0 || K <= 0 || M <= 0) return false;
  // The bias vector is read in 16-byte pieces by the epilogues seen; a less aligned one keeps the old path.
  if (alignment(bias) < 16) return false;
  Impl::Plan& p = i.plan(precision, N, K, M, alignment(x), alignment(w), alignment(y), bias);
  if (!p.ok) return false;
  if (i.desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) != CUBLAS_STATUS_SUCCESS) return false;
  const float one = 1.0f, zero = 0.0f;
  return i.matmul(i.handle, p.desc, &one, w, p.a, x, p.b, &zero, y, p.d, y, p.d, &p.algo, workspace,
                  size_t(kWorkspaceBytes), cudaStreamLegacy) == CUBLAS_STATUS_SUCCESS;
}

}  // namespace mc::cuda

// Optional BLAS entry points, looked up at run time in the BLAS that LibTorch already loaded
// (OpenBLAS on Debian; libblas.so.3 is not on our link line): ssyrk for spar's Gram matrices, sgemm
// for the warm sketch's blocked products (no LibTorch dispatch per block) and OpenBLAS's
// thread-count control. The low-rank encoders (spar, powersgd) run one matrix per
// LibTorch intra-op thread with BLAS held at one thread, instead of two thread pools (OpenMP's
// and OpenBLAS's) competing for the same cores. Without the hooks they fall back to at::mm and
// BLAS's own threading.
#ifndef HILO_COMPRESS_BLAS_HOOKS_H
#define HILO_COMPRESS_BLAS_HOOKS_H

namespace hilo
{

using SsyrkFn = void (*)(const char*, const char*, const int*, const int*, const float*,
                         const float*, const int*, const float*, float*, const int*);
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                         const float*, const int*, const float*, const int*, const float*, float*,
                         const int*);
using SetThreadsFn = void (*)(int);
using GetThreadsFn = int (*)();

struct BlasHooks
{
    SsyrkFn ssyrk{nullptr};            // Fortran ssyrk_, or nullptr
    SgemmFn sgemm{nullptr};            // Fortran sgemm_, or nullptr
    SetThreadsFn set_threads{nullptr}; // openblas_set_num_threads, or nullptr
    GetThreadsFn get_threads{nullptr}; // openblas_get_num_threads, or nullptr
};

/// The hooks, resolved once (thread-safe), immutable afterwards.
const BlasHooks& Blas();

/// Holds BLAS at one thread for its lifetime (no-op without the OpenBLAS hooks). The setting is
/// process-wide: hold it only around work that runs its own parallel loop over matrices.
class SingleThreadedBlas
{
  public:
    SingleThreadedBlas();
    ~SingleThreadedBlas();
    SingleThreadedBlas(const SingleThreadedBlas&) = delete;
    SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

  private:
    int m_saved;
};

} // namespace hilo

#endif // HILO_COMPRESS_BLAS_HOOKS_H

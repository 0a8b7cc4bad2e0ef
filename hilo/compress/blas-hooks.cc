#include "hilo/compress/blas-hooks.h"

#include <dlfcn.h>

namespace hilo
{

const BlasHooks&
Blas()
{
    static const BlasHooks hooks = []
    {
        BlasHooks h;
        h.ssyrk = reinterpret_cast<SsyrkFn>(dlsym(RTLD_DEFAULT, "ssyrk_"));
        h.sgemm = reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"));
        h.set_threads =
            reinterpret_cast<SetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
        h.get_threads =
            reinterpret_cast<GetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
        if (!h.set_threads || !h.get_threads)
        {
            h.set_threads = nullptr;
            h.get_threads = nullptr;
        }
        return h;
    }();
    return hooks;
}

SingleThreadedBlas::SingleThreadedBlas()
  : m_saved(Blas().get_threads ? Blas().get_threads() : 0)
{
    if (Blas().set_threads)
        Blas().set_threads(1);
}

SingleThreadedBlas::~SingleThreadedBlas()
{
    if (Blas().set_threads)
        Blas().set_threads(m_saved);
}

} // namespace hilo

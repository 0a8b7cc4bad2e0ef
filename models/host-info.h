// HostInfo: what a run's numbers depend on beyond the scenario and seed. Full sync and every
// timing column are the same on every x86-64 host, but compressed arms amplify last-bit
// differences of the tiny model's BLAS arithmetic (the kernel OpenBLAS picks for the CPU), so
// summary.json records the host that made it.
#ifndef MODELS_HOST_INFO_H
#define MODELS_HOST_INFO_H

#include <string>

namespace models
{

struct HostInfo
{
    std::string cpu_model;   // /proc/cpuinfo "model name" ("" when unreadable)
    std::string isa_path;    // the project's fixed-order kernels: "avx512", "avx2", "portable"
    std::string blas_core;   // OpenBLAS's chosen kernel set (openblas_get_corename), or ""
    std::string blas_config; // openblas_get_config(): version and build options, or ""
    std::string openblas_coretype; // $OPENBLAS_CORETYPE as set for this process ("" unset)
    std::string libtorch_version;  // the LibTorch this binary was built against
};

/// Reads the host. The OpenBLAS fields are looked up in the running process (the BLAS the
/// system's libblas.so.3 alternative points at), so they are empty under another BLAS.
HostInfo ReadHostInfo();

} // namespace models

#endif // MODELS_HOST_INFO_H

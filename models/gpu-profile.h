// GpuProfile: the peak numbers of one GPU model, read from models/data/gpus.csv (vendor sources
// cited there) and compiled into the library. Inputs of the roofline models in compute-model.h.
#ifndef MODELS_GPU_PROFILE_H
#define MODELS_GPU_PROFILE_H

#include "hilo/core/status.h"

#include <string>
#include <vector>

namespace models
{

struct GpuProfile
{
    std::string name;           // e.g. "H100-SXM"
    double dense_tflops{0};     // peak dense bf16 (fp16 where no bf16) tensor TFLOPS
    double mem_bw_gbs{0};       // peak memory bandwidth, GB/s
    double mem_gb{0};           // memory, GB (1e9 bytes)
    double host_link_gbs{0};    // PCIe per direction, GB/s
    std::string interconnect;   // GPU-to-GPU link inside a node: "NVLink4", "PCIe4", ...
    double interconnect_gbs{0}; // GPU-to-GPU bandwidth per GPU per direction, GB/s

    double flops_per_s() const { return dense_tflops * 1e12; }
    double mem_bytes_per_s() const { return mem_bw_gbs * 1e9; }
    double mem_bytes() const { return mem_gb * 1e9; }
    double host_bytes_per_s() const { return host_link_gbs * 1e9; }
    double interconnect_bytes_per_s() const { return interconnect_gbs * 1e9; }
};

/// Every profile in file order; empty only if the compiled-in table is malformed (tests guard it).
const std::vector<GpuProfile>& ListGpus();
/// The profile named `name` (exact match). kNotFound lists the known names.
hilo::StatusOr<GpuProfile> FindGpu(const std::string& name);

} // namespace models

#endif // MODELS_GPU_PROFILE_H

#include "models/host-info.h"

#include "hilo/compress/sketch-kernel.h"

#include <dlfcn.h>
#include <torch/version.h>

#include <cstdlib>
#include <fstream>

namespace models
{
namespace
{

std::string
CpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
    {
        if (line.rfind("model name", 0) != 0)
            continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos)
            return "";
        const size_t start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
    }
    return "";
}

// A `char* f(void)` of OpenBLAS when the process has it loaded.
std::string
OpenBlasString(const char* symbol)
{
    using Fn = char* (*) ();
    auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, symbol));
    if (fn == nullptr)
        return "";
    const char* s = fn();
    std::string out = s == nullptr ? "" : s;
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

const char*
IsaName(hilo::SketchIsa isa)
{
    switch (isa)
    {
        case hilo::SketchIsa::kAvx512:
            return "avx512";
        case hilo::SketchIsa::kAvx2:
            return "avx2";
        case hilo::SketchIsa::kPortable:
            break;
    }
    return "portable";
}

} // namespace

HostInfo
ReadHostInfo()
{
    HostInfo h;
    h.cpu_model = CpuModel();
    h.isa_path = IsaName(hilo::BestSketchIsa());
    h.blas_core = OpenBlasString("openblas_get_corename");
    h.blas_config = OpenBlasString("openblas_get_config");
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    h.openblas_coretype = coretype == nullptr ? "" : coretype;
    h.libtorch_version = TORCH_VERSION;
    return h;
}

} // namespace models

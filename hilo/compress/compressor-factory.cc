#include "hilo/compress/compressor-factory.h"

#include "hilo/compress/dense.h"
#include "hilo/compress/powersgd.h"
#include "hilo/compress/pulse.h"
#include "hilo/compress/quant.h"
#include "hilo/compress/randk.h"
#include "hilo/compress/spar.h"
#include "hilo/compress/sparq.h"
#include "hilo/compress/topk.h"

namespace hilo
{
namespace
{

using Factory = StatusOr<std::unique_ptr<Compressor>> (*)(const AdapterLayout&,
                                                          const CompressorOptions&);

struct Entry
{
    const char* kind;
    const char* description;
    Factory factory;
};

// Add new compressors here (one line each); the protocol code never changes.
const Entry kEntries[] = {
    {"dense", "uncompressed values (dtype=fp32|bf16|fp16)", &NewDenseCompressor},
    {"spar",
     "budgeted spectral truncation (dtype, min_rank, allocation=energy|preconditioned|uniform, "
     "coverage, ef_max_ratio, sketch, warm, screen, basis=fresh|replicated, basis_width, "
     "basis_share)",
     &NewSparCompressor},
    {"sparq",
     "spar with b-bit factor codes and per-block scales, quantization-aware refit (bits, block, "
     "min_rank, allocation=energy|preconditioned, coverage, ef_max_ratio, sketch, warm, "
     "basis=fresh)",
     &NewSparqCompressor},
    {"powersgd",
     "rank from budget, warm-started power iteration (dtype, max_rank, seed, "
     "error_feedback)",
     &NewPowerSgdCompressor},
    {"topk", "largest magnitudes + Elias-Fano indices (dtype, scope=global|per_matrix)",
     &NewTopKCompressor},
    {"randk", "seeded stratified random subset (dtype, seed, unbiased)", &NewRandKCompressor},
    {"quant", "per-block QSGD levels or int8 absmax (scheme, block, levels, norm, seed)",
     &NewQuantCompressor},
    {"pulse",
     "lossless: the parameters whose bf16 value changed, exactly (delta and primal only; no "
     "budget)",
     &NewPulseCompressor},
};

} // namespace

std::vector<CompressorInfo>
ListCompressors()
{
    std::vector<CompressorInfo> out;
    for (const Entry& e : kEntries)
    {
        out.push_back({e.kind, e.description});
    }
    return out;
}

StatusOr<std::unique_ptr<Compressor>>
NewCompressor(const std::string& kind, const AdapterLayout& layout,
              const CompressorOptions& options)
{
    std::string known;
    for (const Entry& e : kEntries)
    {
        if (kind == e.kind)
        {
            return e.factory(layout, options);
        }
        known += (known.empty() ? "" : ", ") + std::string(e.kind);
    }
    return Status::NotSupported("unknown compressor '" + kind + "' (known: " + known + ")");
}

} // namespace hilo

// The one place that maps compressor names to implementations: a constant table, no if/else
// chain, and an unknown name is an error that lists the known ones.
#ifndef HILO_COMPRESS_COMPRESSOR_FACTORY_H
#define HILO_COMPRESS_COMPRESSOR_FACTORY_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>
#include <string>
#include <vector>

namespace hilo
{

struct CompressorInfo
{
    std::string kind;        // what users write in scenarios: "dense", "spar", ...
    std::string description; // one line for `hilo-sim list compressors`
};

/// Every compressor kind this build knows, in a stable order.
std::vector<CompressorInfo> ListCompressors();

/// Builds the compressor `kind` for `layout` with `options` (strict: unknown keys are errors).
StatusOr<std::unique_ptr<Compressor>> NewCompressor(const std::string& kind,
                                                    const AdapterLayout& layout,
                                                    const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_COMPRESSOR_FACTORY_H

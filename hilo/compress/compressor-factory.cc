#include "hilo/compress/compressor-factory.h"

#include "hilo/compress/dense.h"

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

// dense: the uncompressed gradient (or parameters, for the `full` strategy) in fp32, bf16 or fp16.
//
// Payload `dense-v1`: u8 dtype (0 fp32, 1 bf16, 2 fp16), then exactly numel values in canonical
// layout order, little-endian. Options: dtype=fp32|bf16|fp16 (default fp32). The budget is ignored
// except that a budget below the payload size is an error: dense cannot shrink.
#ifndef HILO_COMPRESS_DENSE_H
#define HILO_COMPRESS_DENSE_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>

namespace hilo
{

StatusOr<std::unique_ptr<Compressor>> NewDenseCompressor(const AdapterLayout& layout,
                                                         const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_DENSE_H

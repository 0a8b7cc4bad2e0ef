// LmCheckpoint: named fp32 tensors and named byte strings in one file, the on-disk form of a
// pretrained TinyLm base, its fine-tuned teacher and the held-out text they were evaluated on.
//
// Format `hilo-lmckpt-v1` (little-endian):
//   8 bytes magic "HILOLMC1", u32 entries, then per entry:
//     u8 type (1 fp32 tensor, 2 bytes), u16 name length, name (1..255 bytes of [A-Za-z0-9._-]),
//     type 1: u8 ndim (1..4), u32 dims[ndim] (each >= 1, product <= 2^28), f32 values
//     type 2: u64 length (<= 2^30), the bytes
//   u64 XXH64 (seed 0) of every byte above.
// Names are unique. Parse rejects anything else (truncation, trailing bytes, a bad digest,
// non-finite values) as kCorruption naming the entry.
#ifndef MODELS_LM_CHECKPOINT_H
#define MODELS_LM_CHECKPOINT_H

#include "hilo/core/status.h"

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <string_view>

namespace models
{

struct LmCheckpoint
{
    std::map<std::string, at::Tensor> tensors; // fp32, contiguous
    std::map<std::string, std::string> blobs;  // text and metadata

    /// The file bytes. REQUIRES: valid names, fp32 tensors of 1..4 dims.
    std::string Serialize() const;
    static hilo::StatusOr<LmCheckpoint> Parse(std::string_view bytes);
    /// Reads and parses `path`; kInvalidArgument naming the path when it cannot be read.
    static hilo::StatusOr<LmCheckpoint> Read(const std::string& path);

    /// Tensors whose names start with `prefix`, with the prefix removed.
    std::map<std::string, at::Tensor> WithPrefix(const std::string& prefix) const;
};

} // namespace models

#endif // MODELS_LM_CHECKPOINT_H

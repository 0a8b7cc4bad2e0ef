// How the process's allocator treats the real workload's tensor temporaries. Each forward and
// backward pass of the tiny model allocates and frees megabytes of activations; by default glibc
// serves blocks above its (adaptive) mmap threshold with fresh mmap()s and returns freed memory at
// the top of the heap to the kernel, so the next pass faults every page in again and the kernel
// zero-fills it. Keeping freed memory in the heap lets the next pass reuse the same pages.
#ifndef MODELS_TENSOR_MEMORY_H
#define MODELS_TENSOR_MEMORY_H

#include "hilo/core/status.h"

#include <cstddef>

namespace models
{

/// What KeepFreedMemoryForReuse sets (bytes).
struct TensorMemoryOptions
{
    // Blocks below this come from the heap, so freeing them keeps their pages. glibc accepts at
    // most 32 MiB on 64-bit hosts: larger blocks are always mapped and unmapped.
    size_t mmap_threshold_bytes{size_t(32) << 20};
    // Free memory at the heap's top kept before it is returned to the kernel: the peak resident
    // memory is unchanged, later passes reuse the pages instead of faulting them in again.
    size_t trim_threshold_bytes{size_t(1) << 30};
    // Extra heap requested per growth, so that a growing pass needs few brk() calls.
    size_t top_pad_bytes{size_t(64) << 20};
};

/// Sets glibc's malloc to keep freed memory for reuse (mallopt M_MMAP_THRESHOLD, M_TRIM_THRESHOLD,
/// M_TOP_PAD). Process-wide: a binary's main calls it once, before the workload allocates. Values
/// are computed bit for bit as before (only where temporaries live changes). Errors:
/// kInvalidArgument naming the option glibc refused (e.g. a threshold above its maximum).
hilo::Status KeepFreedMemoryForReuse(const TensorMemoryOptions& options = TensorMemoryOptions());

} // namespace models

#endif // MODELS_TENSOR_MEMORY_H

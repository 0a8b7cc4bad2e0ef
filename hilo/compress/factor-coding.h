// Factor coding: how low-rank payloads (spar, powersgd) store their vectors, and the deterministic
// reconstruction out = sum_j left_j right_j^T that every decoder of a low-rank payload runs.
//
// A coded vector of n values is, by dtype:
//   fp32 / bf16 / fp16: n values (4 / 2 / 2 bytes each);
//   int8: f32 scale, then n int8 codes q in [-127, 127]; value = scale * q (absmax scaling:
//         scale = max|x| / 127, codes rounded to nearest).
// Decoders reject non-finite values and scales, an int8 scale whose codes could overflow
// (scale * 127 not finite) and the int8 code -128; the reconstruction reports any non-finite output
// (an overflowing sum of finite terms). Both become kCorruption upstream.
#ifndef HILO_COMPRESS_FACTOR_CODING_H
#define HILO_COMPRESS_FACTOR_CODING_H

#include "hilo/core/adapter-layout.h"
#include "hilo/core/coding.h"
#include "hilo/core/status.h"
#include "hilo/core/value-dtype.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hilo
{

/// Bytes of one coded vector of `n` values.
inline int64_t
CodedVectorBytes(int64_t n, ValueDtype dtype)
{
    return n * BytesPerValue(dtype) + (dtype == ValueDtype::kInt8 ? 4 : 0);
}

/// Appends `n` values of `v` coded as `dtype`.
void PutCodedVector(ByteWriter* w, const float* v, int64_t n, ValueDtype dtype);

/// Reads a coded vector into out[i] = multiplier * value_i (one fp32 multiply per value, the same
/// on every host). Returns false when the bytes run out or a value, scale or code is invalid
/// (non-finite, int8 -128, an int8 step * 127 that overflows). REQUIRES: multiplier finite.
bool GetCodedVector(ByteReader* r, float* out, int64_t n, ValueDtype dtype, float multiplier);

/// out[r * cols + c] = sum over j = 0..k-1, in that order, of left[j * rows + r] * right[j * cols
/// + c], in fp32 with separate multiply and add (the build forbids contraction). No BLAS: the
/// result is bit-identical for every thread count, since threads split rows only. k == 0 writes
/// zeros. Returns false when an output value is not finite (out is then fully written anyway).
bool LowRankReconstruct(int64_t rows, int64_t cols, int64_t k, const float* left,
                        const float* right, float* out);

/// One matrix of a batched reconstruction: the arguments of LowRankReconstruct.
struct LowRankFactors
{
    int64_t rows{0};
    int64_t cols{0};
    int64_t k{0};
    const float* left{nullptr};
    const float* right{nullptr};
    float* out{nullptr};
};

/// LowRankReconstruct for every entry of `matrices`, in one parallel loop over row blocks of all
/// of them (one thread hand-off per decode instead of one per matrix; blocks are balanced by
/// their work rows x cols x k). Bit-identical to calling LowRankReconstruct on each. Returns false
/// when any output value is not finite.
bool LowRankReconstructAll(const std::vector<LowRankFactors>& matrices);

/// The factors of a rank-allocated low-rank payload (spar, sparq) while it is decoded: matrix i
/// has ks[i] left vectors of its rows at left[left_at[i] + j * rows] and ks[i] right vectors of
/// its cols at right[right_at[i] + j * cols], j = 0..ks[i]-1.
struct LowRankPayload
{
    std::vector<int64_t> ks;
    std::vector<int64_t> left_at;
    std::vector<int64_t> right_at;
    std::vector<float> left;
    std::vector<float> right;
};

/// Reads the rank section shared by spar and sparq: varint matrix count (must equal the layout's),
/// then one varint rank k_i <= min(rows_i, cols_i) per matrix; what remains of `r` must be exactly
/// sum_i k_i x triplet_bytes(matrix i). Sizes `out`'s buffers. kCorruption, prefixed with
/// `name`, for anything else.
Status ReadLowRankRanks(ByteReader* r, const AdapterLayout& layout, const std::string& name,
                        const std::function<int64_t(const MatrixSpec&)>& triplet_bytes,
                        LowRankPayload* out);

/// out = every matrix of `layout` reconstructed from `p`'s factors (LowRankReconstructAll).
/// Returns false when an output value is not finite.
bool ReconstructLowRankPayload(const LowRankPayload& p, const AdapterLayout& layout,
                               std::vector<float>* out);

} // namespace hilo

#endif // HILO_COMPRESS_FACTOR_CODING_H

// Elias-Fano coding of a strictly increasing sequence of k indices in [0, n): the index coding of
// topk. Its size is a closed-form function of (k, n, L), so a compressor can choose k to fit a byte
// budget before selecting anything, and it is within about 2 bits per index of the information-
// theoretic minimum log2(C(n, k)).
//
// Encoding with L low bits per index (L chosen by EliasFanoBestLowBits):
//   u8 L, then ceil(k * L / 8) bytes: the low L bits of every index, packed LSB-first;
//   then ceil((((n - 1) >> L) + k) / 8) bytes: the upper bit vector, bit (idx_i >> L) + i set for
//   every i, LSB-first within bytes. k == 0 writes only the L byte. (k and n are known from
//   context: the caller writes k, the layout gives n.)
#ifndef HILO_COMPRESS_ELIAS_FANO_H
#define HILO_COMPRESS_ELIAS_FANO_H

#include "hilo/core/coding.h"

#include <cstdint>
#include <vector>

namespace hilo
{

/// Bytes of the encoding (including the L byte). REQUIRES: 0 <= k <= n, n >= 1, L <= 56.
int64_t EliasFanoBytes(int64_t k, int64_t n, int low_bits);
/// The L that minimises EliasFanoBytes(k, n, L) (the smallest such L).
int EliasFanoBestLowBits(int64_t k, int64_t n);

/// Appends the encoding of `indices` (strictly increasing, all < n) with `low_bits`.
void PutEliasFano(ByteWriter* w, const int64_t* indices, int64_t k, int64_t n, int low_bits);

/// A lower bound on the bytes of any valid encoding of k indices (the L byte and the k set bits
/// of the upper vector): lets a decoder check a count against the bytes left before it allocates
/// anything sized by it.
inline uint64_t
MinEliasFanoBytes(uint64_t k)
{
    return 1 + (k + 7) / 8;
}

/// Reads k indices coded for universe n into `out` (resized to k). Returns false unless the bytes
/// are exactly a valid encoding: L <= 56, enough bytes, exactly k set bits in the upper vector,
/// indices strictly increasing and < n. Never allocates more than k indices.
bool GetEliasFano(ByteReader* r, int64_t k, int64_t n, std::vector<int64_t>* out);

} // namespace hilo

#endif // HILO_COMPRESS_ELIAS_FANO_H

// Finiteness checks for decoded values: every decoder and the replay refuse to hand on a NaN or an
// infinity (a forged payload must not be able to put one into an adapter). The test looks at the
// exponent field only, so the loops vectorize and cost about one compare per value.
#ifndef HILO_CORE_FINITE_H
#define HILO_CORE_FINITE_H

#include <cstdint>
#include <cstring>

namespace hilo
{

/// True when `v` is NaN or an infinity (all exponent bits set).
inline bool
NonFinite(float v)
{
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return (bits & 0x7f800000u) == 0x7f800000u;
}

/// A value whose top bit is set exactly when `v` is NaN or an infinity: the exponent field plus one
/// exponent step carries into bit 31 only from all ones. OR-ing these over a loop is a pure
/// integer reduction that vectorizes (a bool reduction does not, with GCC 12); test the result
/// with NonFiniteSeen.
inline uint32_t
NonFiniteBits(float v)
{
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return (bits & 0x7f800000u) + 0x00800000u;
}

/// True when an OR of NonFiniteBits values saw a NaN or an infinity.
inline bool
NonFiniteSeen(uint32_t acc)
{
    return (acc & 0x80000000u) != 0;
}

/// True when every one of p[0..n) is finite. Serial: call it on the chunk a thread already owns.
bool AllFinite(const float* p, int64_t n);

/// AllFinite over [0, n), split across threads (the answer does not depend on the split).
bool AllFiniteParallel(const float* p, int64_t n);

} // namespace hilo

#endif // HILO_CORE_FINITE_H

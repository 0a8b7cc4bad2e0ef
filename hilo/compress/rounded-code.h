// A quantizer's integer code: std::nearbyint(v) clamped to [-levels, levels], without a library
// call. The build's baseline x86-64 has no rounding instruction, so nearbyint is a call, and the
// call kept sparq's Quantize loops (six clipping levels times every kept vector) scalar and slow.
#ifndef HILO_COMPRESS_ROUNDED_CODE_H
#define HILO_COMPRESS_ROUNDED_CODE_H

#include <algorithm>

namespace hilo
{

/// The same value as std::min(levels, std::max(-levels, std::nearbyint(v))) in the default
/// rounding mode, up to the sign of a zero: clamping first changes nothing (rounding is monotone
/// and keeps integers), and below 2^51 adding and subtracting 1.5 x 2^52 rounds to the nearest
/// integer, ties to even, as nearbyint does. NaN clamps to -levels and +-inf to +-levels, as
/// there. `levels` must be below 2^51. Needs IEEE double arithmetic without reassociation (the
/// build has no -ffast-math).
inline double
RoundedCode(double v, double levels)
{
    constexpr double kMagic = 6755399441055744.0; // 1.5 x 2^52
    const double c = std::min(levels, std::max(-levels, v));
    return (c + kMagic) - kMagic;
}

} // namespace hilo

#endif // HILO_COMPRESS_ROUNDED_CODE_H

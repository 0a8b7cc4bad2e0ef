// Value encodings for floats on the wire, and the conversions between them. All conversions are
// round-to-nearest-even, scalar, and bit-exact on every host (no hardware conversion instructions,
// whose availability varies).
#ifndef HILO_CORE_VALUE_DTYPE_H
#define HILO_CORE_VALUE_DTYPE_H

#include "hilo/core/status.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace hilo
{

enum class ValueDtype : uint8_t
{
    kFp32 = 0,
    kBf16 = 1,
    kFp16 = 2,
    kInt8 = 3, // absmax-scaled; the scale layout is the encoder's business
};

/// "fp32", "bf16", "fp16", "int8".
const char* ValueDtypeName(ValueDtype d);
/// Parses a name produced by ValueDtypeName.
StatusOr<ValueDtype> ParseValueDtype(std::string_view name);
/// Bytes per stored value: 4, 2, 2, 1.
int BytesPerValue(ValueDtype d);

inline uint32_t
FloatBits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof(u));
    return u;
}

inline float
BitsToFloat(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
}

/// fp32 -> bf16 bits, round to nearest even; NaN stays NaN (quiet).
inline uint16_t
FloatToBf16(float f)
{
    uint32_t u = FloatBits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
    {
        return static_cast<uint16_t>((u >> 16) | 0x0040u);
    }
    uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>((u + rounding) >> 16);
}

inline float
Bf16ToFloat(uint16_t b)
{
    return BitsToFloat(static_cast<uint32_t>(b) << 16);
}

/// fp32 -> IEEE binary16 bits, round to nearest even, overflow to infinity.
uint16_t FloatToFp16(float f);
float Fp16ToFloat(uint16_t h);

/// Rounds through bf16 and back: the value a bf16 receiver will hold.
inline float
RoundBf16(float f)
{
    return Bf16ToFloat(FloatToBf16(f));
}

} // namespace hilo

#endif // HILO_CORE_VALUE_DTYPE_H

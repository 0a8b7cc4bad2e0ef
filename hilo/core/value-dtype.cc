#include "hilo/core/value-dtype.h"

namespace hilo
{

const char*
ValueDtypeName(ValueDtype d)
{
    switch (d)
    {
        case ValueDtype::kFp32:
            return "fp32";
        case ValueDtype::kBf16:
            return "bf16";
        case ValueDtype::kFp16:
            return "fp16";
        case ValueDtype::kInt8:
            return "int8";
    }
    return "unknown";
}

StatusOr<ValueDtype>
ParseValueDtype(std::string_view name)
{
    for (ValueDtype d :
         {ValueDtype::kFp32, ValueDtype::kBf16, ValueDtype::kFp16, ValueDtype::kInt8})
    {
        if (name == ValueDtypeName(d))
        {
            return d;
        }
    }
    return Status::InvalidArgument("unknown value dtype '" + std::string(name) +
                                   "' (allowed: fp32, bf16, fp16, int8)");
}

int
BytesPerValue(ValueDtype d)
{
    switch (d)
    {
        case ValueDtype::kFp32:
            return 4;
        case ValueDtype::kBf16:
        case ValueDtype::kFp16:
            return 2;
        case ValueDtype::kInt8:
            return 1;
    }
    return 4;
}

uint16_t
FloatToFp16(float f)
{
    uint32_t x = FloatBits(f);
    uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    uint32_t absx = x & 0x7fffffffu;
    if (absx > 0x7f800000u)
    {
        return static_cast<uint16_t>(sign | 0x7e00u); // quiet NaN
    }
    if (absx >= 0x477ff000u) // rounds to >= 65520: infinity
    {
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    if (absx < 0x38800000u) // below the smallest normal half: subnormal or zero
    {
        if (absx < 0x33000000u) // below half the smallest subnormal: rounds to zero
        {
            return sign;
        }
        uint32_t exp = absx >> 23;
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - exp; // in [14, 24]
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half & 1u)))
        {
            ++half;
        }
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t rounded = absx + 0xfffu + ((absx >> 13) & 1u);
    uint32_t h = (rounded >> 13) - (112u << 10);
    return static_cast<uint16_t>(sign | h);
}

float
Fp16ToFloat(uint16_t h)
{
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0)
    {
        if (mant == 0)
        {
            return BitsToFloat(sign);
        }
        // subnormal: normalise
        int e = -1;
        do
        {
            ++e;
            mant <<= 1;
        } while ((mant & 0x400u) == 0);
        mant &= 0x3ffu;
        return BitsToFloat(sign | static_cast<uint32_t>(112 - e) << 23 | mant << 13);
    }
    if (exp == 31)
    {
        return BitsToFloat(sign | 0x7f800000u | mant << 13);
    }
    return BitsToFloat(sign | (exp + 112u) << 23 | mant << 13);
}

} // namespace hilo

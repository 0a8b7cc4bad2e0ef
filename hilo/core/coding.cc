#include "hilo/core/coding.h"

#include <cstring>

namespace hilo
{

void
ByteWriter::PutU16(uint16_t v)
{
    char b[2] = {static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
    m_out->append(b, 2);
}

void
ByteWriter::PutU32(uint32_t v)
{
    char b[4];
    for (int i = 0; i < 4; ++i)
    {
        b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
    m_out->append(b, 4);
}

void
ByteWriter::PutU64(uint64_t v)
{
    char b[8];
    for (int i = 0; i < 8; ++i)
    {
        b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
    m_out->append(b, 8);
}

void
ByteWriter::PutF64(double v)
{
    uint64_t u;
    std::memcpy(&u, &v, sizeof u);
    PutU64(u);
}

void
ByteWriter::PutVarint(uint64_t v)
{
    while (v >= 0x80)
    {
        m_out->push_back(static_cast<char>((v & 0x7f) | 0x80));
        v >>= 7;
    }
    m_out->push_back(static_cast<char>(v));
}

void
ByteWriter::PutBytes(const void* data, size_t size)
{
    m_out->append(static_cast<const char*>(data), size);
}

void
ByteWriter::PutFloats(const float* values, size_t n, ValueDtype dtype)
{
    if (dtype == ValueDtype::kFp32)
    {
        m_out->append(reinterpret_cast<const char*>(values), n * 4);
        return;
    }
    // bf16 or fp16 (int8 is no per-value encoding: factor-coding.h writes it with its scale).
    const size_t start = m_out->size();
    m_out->resize(start + n * 2);
    char* p = &(*m_out)[start];
    for (size_t i = 0; i < n; ++i)
    {
        const uint16_t h =
            dtype == ValueDtype::kBf16 ? FloatToBf16(values[i]) : FloatToFp16(values[i]);
        p[2 * i] = static_cast<char>(h & 0xff);
        p[2 * i + 1] = static_cast<char>(h >> 8);
    }
}

bool
ByteReader::GetU8(uint8_t* v)
{
    if (m_in.size() < 1)
    {
        return false;
    }
    *v = static_cast<uint8_t>(m_in[0]);
    m_in.remove_prefix(1);
    return true;
}

bool
ByteReader::GetU16(uint16_t* v)
{
    if (m_in.size() < 2)
    {
        return false;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(m_in.data());
    *v = static_cast<uint16_t>(p[0] | (p[1] << 8));
    m_in.remove_prefix(2);
    return true;
}

bool
ByteReader::GetU32(uint32_t* v)
{
    if (m_in.size() < 4)
    {
        return false;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(m_in.data());
    uint32_t r = 0;
    for (int i = 3; i >= 0; --i)
    {
        r = (r << 8) | p[i];
    }
    *v = r;
    m_in.remove_prefix(4);
    return true;
}

bool
ByteReader::GetU64(uint64_t* v)
{
    if (m_in.size() < 8)
    {
        return false;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(m_in.data());
    uint64_t r = 0;
    for (int i = 7; i >= 0; --i)
    {
        r = (r << 8) | p[i];
    }
    *v = r;
    m_in.remove_prefix(8);
    return true;
}

bool
ByteReader::GetF32(float* v)
{
    uint32_t u;
    if (!GetU32(&u))
    {
        return false;
    }
    *v = BitsToFloat(u);
    return true;
}

bool
ByteReader::GetF64(double* v)
{
    uint64_t u;
    if (!GetU64(&u))
    {
        return false;
    }
    std::memcpy(v, &u, sizeof u);
    return true;
}

bool
ByteReader::GetVarint(uint64_t* v)
{
    uint64_t r = 0;
    for (int shift = 0; shift <= 63 && !m_in.empty(); shift += 7)
    {
        uint8_t byte = static_cast<uint8_t>(m_in[0]);
        m_in.remove_prefix(1);
        r |= static_cast<uint64_t>(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0)
        {
            *v = r;
            return true;
        }
    }
    return false;
}

bool
ByteReader::GetBytes(size_t size, std::string_view* out)
{
    if (m_in.size() < size)
    {
        return false;
    }
    *out = m_in.substr(0, size);
    m_in.remove_prefix(size);
    return true;
}

bool
ByteReader::GetFloats(float* out, size_t n, ValueDtype dtype)
{
    if (dtype == ValueDtype::kInt8)
    {
        return false;
    }
    if (n == 0)
    {
        return true; // `out` may then be null (an empty vector's data()), which memcpy forbids
    }
    size_t width = static_cast<size_t>(BytesPerValue(dtype));
    if (n > m_in.size() / width)
    {
        return false;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(m_in.data());
    if (dtype == ValueDtype::kFp32)
    {
        std::memcpy(out, p, n * 4);
    }
    else
    {
        for (size_t i = 0; i < n; ++i)
        {
            uint16_t h = static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
            out[i] = dtype == ValueDtype::kBf16 ? Bf16ToFloat(h) : Fp16ToFloat(h);
        }
    }
    m_in.remove_prefix(n * width);
    return true;
}

} // namespace hilo

// Little-endian byte coding for payloads (leveldb util/coding shape). Writers append to a
// std::string; readers consume a string_view and fail, never read past the end.
#ifndef HILO_CORE_CODING_H
#define HILO_CORE_CODING_H

#include "hilo/core/status.h"
#include "hilo/core/value-dtype.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace hilo
{

/// Bytes ByteWriter::PutVarint(v) appends (1 to 10): for payload-size arithmetic.
inline int64_t
VarintLength(uint64_t v)
{
    int64_t n = 1;
    while (v >= 0x80)
    {
        v >>= 7;
        ++n;
    }
    return n;
}

class ByteWriter
{
  public:
    explicit ByteWriter(std::string* out)
      : m_out(out)
    {
    }

    void PutU8(uint8_t v) { m_out->push_back(static_cast<char>(v)); }
    void PutU16(uint16_t v);
    void PutU32(uint32_t v);
    void PutU64(uint64_t v);
    void PutF32(float v) { PutU32(FloatBits(v)); }
    /// The IEEE-754 binary64 bits of `v` as a u64: every value, -0.0 and NaN payloads included,
    /// reads back bit for bit.
    void PutF64(double v);
    /// LEB128 varint.
    void PutVarint(uint64_t v);
    void PutBytes(const void* data, size_t size);
    /// Appends `n` floats converted to `dtype`. REQUIRES: dtype is fp32, bf16 or fp16 (int8
    /// needs a scale: PutCodedVector in hilo/compress/factor-coding.h).
    void PutFloats(const float* values, size_t n, ValueDtype dtype);

  private:
    std::string* m_out;
};

class ByteReader
{
  public:
    explicit ByteReader(std::string_view in)
      : m_in(in)
    {
    }

    bool GetU8(uint8_t* v);
    bool GetU16(uint16_t* v);
    bool GetU32(uint32_t* v);
    bool GetU64(uint64_t* v);
    bool GetF32(float* v);
    /// PutF64's bits as a double, unchanged (non-finite values included: callers check).
    bool GetF64(double* v);
    bool GetVarint(uint64_t* v);
    /// Points `*out` at the next `size` bytes and skips them.
    bool GetBytes(size_t size, std::string_view* out);
    /// Reads `n` floats stored as `dtype` (fp32, bf16 or fp16) into `out`. Checks the length first.
    bool GetFloats(float* out, size_t n, ValueDtype dtype);

    size_t remaining() const { return m_in.size(); }
    bool empty() const { return m_in.empty(); }

  private:
    std::string_view m_in;
};

} // namespace hilo

#endif // HILO_CORE_CODING_H

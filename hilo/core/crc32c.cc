#include "hilo/core/crc32c.h"

#include <array>

namespace hilo
{
namespace
{

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables
MakeTables()
{
    Tables t{};
    for (uint32_t i = 0; i < 256; ++i)
    {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
        {
            c = (c & 1u) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        }
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
    {
        for (int s = 1; s < 8; ++s)
        {
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xffu];
        }
    }
    return t;
}

constexpr Tables kTables = MakeTables();

} // namespace

uint32_t
Crc32c(const void* data, size_t size, uint32_t crc)
{
    const auto* p = static_cast<const unsigned char*>(data);
    uint32_t c = ~crc;
    while (size >= 8)
    {
        uint32_t lo = c ^ (static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                           static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
        c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
            kTables[4][lo >> 24] ^ kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^
            kTables[0][p[7]];
        p += 8;
        size -= 8;
    }
    while (size-- > 0)
    {
        c = kTables[0][(c ^ *p++) & 0xffu] ^ (c >> 8);
    }
    return ~c;
}

} // namespace hilo

#include "hilo/core/hash.h"

#include <cstring>
#include <xxhash.h>

namespace hilo
{

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "hilo hashes and wire formats assume a little-endian host");

uint64_t
HashFloats(const std::vector<float>& values)
{
    return XXH64(values.data(), values.size() * sizeof(float), 0);
}

uint64_t
HashBytes(const void* data, size_t size)
{
    return XXH64(data, size, 0);
}

Hasher::Hasher()
  : m_state(XXH64_createState())
{
    XXH64_reset(static_cast<XXH64_state_t*>(m_state), 0);
}

Hasher::~Hasher()
{
    XXH64_freeState(static_cast<XXH64_state_t*>(m_state));
}

void
Hasher::AddBytes(const void* data, size_t size)
{
    XXH64_update(static_cast<XXH64_state_t*>(m_state), data, size);
}

void
Hasher::AddU64(uint64_t v)
{
    AddBytes(&v, sizeof(v));
}

void
Hasher::AddF32(float v)
{
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    AddBytes(&bits, sizeof(bits));
}

void
Hasher::AddF64(double v)
{
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    AddU64(bits);
}

void
Hasher::AddString(std::string_view s)
{
    AddU64(s.size());
    AddBytes(s.data(), s.size());
}

uint64_t
Hasher::Digest() const
{
    return XXH64_digest(static_cast<const XXH64_state_t*>(m_state));
}

} // namespace hilo

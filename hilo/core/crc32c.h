// CRC-32C (Castagnoli), the frame checksum of the HiLo wire format. Software, slicing-by-8.
#ifndef HILO_CORE_CRC32C_H
#define HILO_CORE_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace hilo
{

/// CRC-32C of `size` bytes, continuing from `crc` (0 for a fresh checksum).
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

} // namespace hilo

#endif // HILO_CORE_CRC32C_H

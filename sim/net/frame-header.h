// The header of one framed message on a byte stream, shared by the simulator's transport
// (message-frame.h, over ns-3 TCP) and the process driver's (sim/drivers/process/, over kernel
// TCP). The stream format is specified in message-frame.h. Knows nothing of ns-3.
#ifndef HILO_SIM_NET_FRAME_HEADER_H
#define HILO_SIM_NET_FRAME_HEADER_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace hilosim
{

struct FrameHeader
{
    static constexpr uint32_t kMagic = 0x464D4C48;
    static constexpr uint32_t kBytes = 40;
    static constexpr uint32_t kHelloType = 0xFFFFFFFF;     // the transport's hello
    static constexpr uint32_t kHeartbeatType = 0xFFFFFFFE; // the transport's keep-alive

    uint32_t type{0};
    uint64_t payload_bytes{0};
    uint64_t wire_bytes{0};
    int64_t sent_at_steps{0};
    uint32_t payload_crc{0}; // CRC-32C of the real payload bytes (hilo::Crc32c)

    /// Appends the 40 header bytes to `out` (header_crc computed here).
    void AppendTo(std::string* out) const;
    /// Corruption on a bad magic, a bad header CRC or wire_bytes < payload_bytes;
    /// `maxPayloadBytes` bounds the memory a single frame may claim.
    /// REQUIRES: in.size() == kBytes.
    static hilo::StatusOr<FrameHeader> Parse(std::string_view in, uint64_t maxPayloadBytes);
};

} // namespace hilosim

#endif // HILO_SIM_NET_FRAME_HEADER_H

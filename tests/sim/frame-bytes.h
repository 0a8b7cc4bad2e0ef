// Frames as a peer puts them on the stream (the format of sim/net/message-frame.h), built by hand
// for the tests that speak to a transport from raw sockets or feed its frame reader, and for the
// fuzz-transport seeds (tests/fuzz/transport-input.cc). Header-only: the fuzz build includes it.
#ifndef HILOSIM_TESTS_FRAME_BYTES_H
#define HILOSIM_TESTS_FRAME_BYTES_H

#include "sim/net/frame-header.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

#include <cstdint>
#include <string>

namespace hilosim::test
{

/// The 40 header bytes of a frame of `type` announcing `payload_bytes` (`wire_bytes` on the
/// wire), its CRC-32C that of `crc_of`: a header may lie about the payload that follows it.
inline std::string
FrameHeaderBytes(uint32_t type, uint64_t payload_bytes, uint64_t wire_bytes,
                 const std::string& crc_of = "")
{
    FrameHeader h;
    h.type = type;
    h.payload_bytes = payload_bytes;
    h.wire_bytes = wire_bytes;
    h.payload_crc = hilo::Crc32c(crc_of.data(), crc_of.size());
    std::string out;
    h.AppendTo(&out);
    return out;
}

/// A whole frame: the header with the payload's CRC-32C, the payload, then `padding` zero bytes.
inline std::string
Framed(uint32_t type, const std::string& payload, uint64_t padding = 0)
{
    return FrameHeaderBytes(type, payload.size(), payload.size() + padding, payload) + payload +
           std::string(padding, '\0');
}

/// A peer id as a hello carries it (4 bytes, little-endian).
inline std::string
PeerIdBytes(uint32_t id)
{
    std::string out;
    hilo::ByteWriter(&out).PutU32(id);
    return out;
}

/// The plain hello of peer `id` (a listener without a key: no nonce, no proof).
inline std::string
HelloFrame(uint32_t id)
{
    return Framed(FrameHeader::kHelloType, PeerIdBytes(id));
}

} // namespace hilosim::test

#endif // HILOSIM_TESTS_FRAME_BYTES_H

#include "sim/net/frame-header.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

namespace hilosim
{

void
FrameHeader::AppendTo(std::string* out) const
{
    hilo::ByteWriter w(out);
    w.PutU32(kMagic);
    w.PutU32(type);
    w.PutU64(payload_bytes);
    w.PutU64(wire_bytes);
    w.PutU64(static_cast<uint64_t>(sent_at_steps));
    w.PutU32(payload_crc);
    w.PutU32(hilo::Crc32c(out->data() + out->size() - (kBytes - 4), kBytes - 4));
}

hilo::StatusOr<FrameHeader>
FrameHeader::Parse(std::string_view in, uint64_t maxPayloadBytes)
{
    hilo::ByteReader r(in);
    uint32_t magic = 0;
    FrameHeader h;
    uint64_t sentAt = 0;
    uint32_t headerCrc = 0;
    if (in.size() != kBytes || !r.GetU32(&magic) || !r.GetU32(&h.type) ||
        !r.GetU64(&h.payload_bytes) || !r.GetU64(&h.wire_bytes) || !r.GetU64(&sentAt) ||
        !r.GetU32(&h.payload_crc) || !r.GetU32(&headerCrc))
    {
        return hilo::Status::Corruption("message frame header is not 40 bytes");
    }
    if (magic != kMagic)
    {
        return hilo::Status::Corruption("message frame has bad magic (stream out of sync)");
    }
    if (headerCrc != hilo::Crc32c(in.data(), kBytes - 4))
    {
        return hilo::Status::Corruption("message frame header fails its CRC-32C");
    }
    if (h.wire_bytes < h.payload_bytes)
    {
        return hilo::Status::Corruption("message frame wire_bytes " + std::to_string(h.wire_bytes) +
                                        " < payload_bytes " + std::to_string(h.payload_bytes));
    }
    if (h.payload_bytes > maxPayloadBytes)
    {
        return hilo::Status::Corruption(
            "message frame payload of " + std::to_string(h.payload_bytes) +
            " bytes exceeds the limit of " + std::to_string(maxPayloadBytes));
    }
    h.sent_at_steps = static_cast<int64_t>(sentAt);
    return h;
}

} // namespace hilosim

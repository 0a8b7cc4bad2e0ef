#include "hilo/wire/framing.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

namespace hilo
{
namespace
{
constexpr char kMagic[4] = {'H', 'L', 'O', '1'};

uint64_t
EffectiveLimit(uint64_t max_body)
{
    return max_body < kMaxFrameBody ? max_body : kMaxFrameBody;
}

} // namespace

StatusOr<std::string>
EncodeFrame(FrameKind kind, std::string_view body, uint64_t max_body)
{
    const uint64_t limit = EffectiveLimit(max_body);
    if (body.size() > limit)
    {
        return Status::InvalidArgument("frame body of " + std::to_string(body.size()) +
                                       " bytes exceeds the frame limit of " +
                                       std::to_string(limit) + " bytes");
    }
    std::string out;
    out.reserve(kFrameHeaderBytes + body.size());
    ByteWriter w(&out);
    w.PutBytes(kMagic, 4);
    w.PutU8(static_cast<uint8_t>(kind));
    w.PutU8(0);
    w.PutU16(0);
    w.PutU64(body.size());
    w.PutU32(Crc32c(body.data(), body.size()));
    out.append(body);
    return out;
}

StatusOr<uint64_t>
PeekFrameBodyLength(std::string_view header, uint64_t max_body)
{
    if (header.size() < kFrameHeaderBytes)
    {
        return Status::Corruption("truncated frame header: " + std::to_string(header.size()) +
                                  " of " + std::to_string(kFrameHeaderBytes) + " bytes");
    }
    if (header.substr(0, 4) != std::string_view(kMagic, 4))
    {
        return Status::Corruption("bad frame magic");
    }
    ByteReader r(header.substr(4, kFrameHeaderBytes - 4));
    uint8_t kind = 0, r0 = 0;
    uint16_t r1 = 0;
    uint64_t length = 0;
    r.GetU8(&kind);
    r.GetU8(&r0);
    r.GetU16(&r1);
    r.GetU64(&length);
    if (kind != static_cast<uint8_t>(FrameKind::kUpdate) &&
        kind != static_cast<uint8_t>(FrameKind::kSnapshot))
    {
        return Status::Corruption("unknown frame kind " + std::to_string(kind));
    }
    if (r0 != 0 || r1 != 0)
    {
        return Status::Corruption("non-zero reserved bytes in frame header");
    }
    const uint64_t limit = EffectiveLimit(max_body);
    if (length > limit)
    {
        return Status::Corruption("frame declares a " + std::to_string(length) +
                                  "-byte body; the limit is " + std::to_string(limit));
    }
    return length;
}

StatusOr<FrameView>
DecodeFrame(std::string_view frame, uint64_t max_body)
{
    StatusOr<uint64_t> length = PeekFrameBodyLength(frame, max_body);
    if (!length.ok())
    {
        return length.status();
    }
    const uint64_t available = frame.size() - kFrameHeaderBytes;
    if (available != *length)
    {
        return Status::Corruption(std::string(available < *length ? "truncated" : "oversized") +
                                  " frame: header declares " + std::to_string(*length) +
                                  " body bytes, " + std::to_string(available) + " present");
    }
    ByteReader r(frame.substr(16, 4));
    uint32_t crc = 0;
    r.GetU32(&crc);
    std::string_view body = frame.substr(kFrameHeaderBytes);
    if (Crc32c(body.data(), body.size()) != crc)
    {
        return Status::Corruption("frame CRC-32C mismatch");
    }
    return FrameView{static_cast<FrameKind>(static_cast<uint8_t>(frame[4])), body};
}

} // namespace hilo

// Frames: magic + kind + length + CRC-32C around a Protobuf body (FORMAT.md). Truncation,
// corruption and absurd lengths are detected before the body is parsed or anything is allocated.
#ifndef HILO_WIRE_FRAMING_H
#define HILO_WIRE_FRAMING_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace hilo
{

enum class FrameKind : uint8_t
{
    kUpdate = 1,
    kSnapshot = 2,
};

constexpr size_t kFrameHeaderBytes = 20;
/// Default ceiling on a frame body: 4 GiB, far above any real adapter, far below a corrupt u64.
constexpr uint64_t kDefaultMaxFrameBody = uint64_t{1} << 32;

struct FrameView
{
    FrameKind kind;
    std::string_view body; // points into the parsed buffer
};

/// Wraps `body` in a frame of `kind`.
std::string EncodeFrame(FrameKind kind, std::string_view body);

/// Checks the header of `frame` and returns the body length it declares. Needs only the first
/// kFrameHeaderBytes bytes (for streaming receivers that must know how much to wait for).
StatusOr<uint64_t> PeekFrameBodyLength(std::string_view header,
                                       uint64_t max_body = kDefaultMaxFrameBody);

/// Validates a complete frame (magic, kind, reserved bytes, length, CRC) and returns its body.
StatusOr<FrameView> DecodeFrame(std::string_view frame, uint64_t max_body = kDefaultMaxFrameBody);

} // namespace hilo

#endif // HILO_WIRE_FRAMING_H

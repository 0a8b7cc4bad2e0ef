// Frames: magic + kind + length + CRC-32C around a Protobuf body (FORMAT.md). Truncation,
// corruption and absurd lengths are detected before the body is parsed or anything is allocated.
#ifndef HILO_WIRE_FRAMING_H
#define HILO_WIRE_FRAMING_H

#include "hilo/core/status.h"

#include <cstdint>
#include <limits>
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
/// Hard ceiling on a frame body, INT_MAX bytes (2 GiB - 1): Protobuf serializes and parses at most
/// that much in one message, so a longer body could be framed but never decoded. Every limit
/// passed below is capped at this value.
constexpr uint64_t kMaxFrameBody = static_cast<uint64_t>(std::numeric_limits<int>::max());
/// Default ceiling on a frame body, for senders and receivers alike.
constexpr uint64_t kDefaultMaxFrameBody = kMaxFrameBody;

struct FrameView
{
    FrameKind kind;
    std::string_view body; // points into the parsed buffer
};

/// Wraps `body` in a frame of `kind`. kInvalidArgument, naming both sizes, when `body` is longer
/// than min(max_body, kMaxFrameBody); the body is not read then.
StatusOr<std::string> EncodeFrame(FrameKind kind, std::string_view body,
                                  uint64_t max_body = kDefaultMaxFrameBody);

/// Checks the header of `frame` and returns the body length it declares, which is at most
/// min(max_body, kMaxFrameBody). Needs only the first kFrameHeaderBytes bytes (for streaming
/// receivers that must know how much to wait for).
StatusOr<uint64_t> PeekFrameBodyLength(std::string_view header,
                                       uint64_t max_body = kDefaultMaxFrameBody);

/// Validates a complete frame (magic, kind, reserved bytes, length, CRC) and returns its body.
StatusOr<FrameView> DecodeFrame(std::string_view frame, uint64_t max_body = kDefaultMaxFrameBody);

} // namespace hilo

#endif // HILO_WIRE_FRAMING_H

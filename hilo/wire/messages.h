// Building and parsing framed Update and Snapshot messages (FORMAT.md). Parsing checks framing,
// format version and every size against the layout before anything is allocated or applied.
#ifndef HILO_WIRE_MESSAGES_H
#define HILO_WIRE_MESSAGES_H

#include "hilo/core/adapter-state.h"
#include "hilo/core/status.h"
#include "hilo/wire/framing.h"
#include "hilo/wire/hilo.pb.h"

#include <string>
#include <string_view>

namespace hilo
{

constexpr uint32_t kFormatVersion = 1;

/// Deterministic serialization of `update` into a frame. kInvalidArgument, naming the sizes, when
/// the body would exceed min(max_body, kMaxFrameBody); kInternal if Protobuf fails to serialize.
/// Never an empty or partial frame.
StatusOr<std::string> EncodeUpdateFrame(const wire::Update& update,
                                        uint64_t max_body = kDefaultMaxFrameBody);
/// Unframes and parses an Update; checks the format version and version == base_version + 1.
StatusOr<wire::Update> DecodeUpdateFrame(std::string_view frame,
                                         uint64_t max_body = kDefaultMaxFrameBody);

/// Largest body a snapshot holding `theta_values`, `m_values` and `v_values` fp32 values can
/// need (every integer field at its widest encoding). A snapshot is framed whole, so an adapter
/// whose bound exceeds the frame limit cannot be snapshotted; Publisher::Create checks it.
uint64_t SnapshotBodyBytesBound(uint64_t theta_values, uint64_t m_values, uint64_t v_values);

/// Frames a snapshot of `state` (version taken from state.adapter.version). kInvalidArgument
/// when SnapshotBodyBytesBound of its sizes exceeds min(max_body, kMaxFrameBody), checked before
/// anything is copied; kInternal if Protobuf fails to serialize.
StatusOr<std::string> EncodeSnapshotFrame(const ReplicatedState& state, uint64_t config_hash,
                                          uint64_t max_body = kDefaultMaxFrameBody);

struct DecodedSnapshot
{
    ReplicatedState state;
    uint64_t config_hash{0};
};

/// Unframes and parses a snapshot for a layout of `numel` parameters; checks sizes (theta exactly
/// numel values; m and v numel values or empty) and the state hash.
StatusOr<DecodedSnapshot> DecodeSnapshotFrame(std::string_view frame, int64_t numel,
                                              uint64_t max_body = kDefaultMaxFrameBody);

} // namespace hilo

#endif // HILO_WIRE_MESSAGES_H

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

/// Deterministic serialization of `update` into a frame.
std::string EncodeUpdateFrame(const wire::Update& update);
/// Unframes and parses an Update; checks the format version and version == base_version + 1.
StatusOr<wire::Update> DecodeUpdateFrame(std::string_view frame,
                                         uint64_t max_body = kDefaultMaxFrameBody);

/// Frames a snapshot of `state` (version taken from state.adapter.version).
std::string EncodeSnapshotFrame(const ReplicatedState& state, uint64_t config_hash);

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

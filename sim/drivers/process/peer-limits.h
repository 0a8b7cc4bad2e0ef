// PeerLimits: what one peer may cost a node of an arm, for its transport (TcpTransportOptions's
// max_payload_for and max_queued_bytes) and for what the node keeps before its role starts.
//
// Inbound, per message type, the most a node of that role can be sent:
//   learner: trajectories exactly one batch of the workload's shape (16-byte envelope + the
//            batch: its size is known from the workload), a resync request 9 bytes, a done 16;
//   worker:  an update or a catch-up up to the arm's frame limit (arm-frame-limit.h), a welcome
//            16 bytes;
//   relay:   an update up to the frame limit.
// Any other type may carry no payload (its header alone reaches the role, which refuses it).
// Outbound, the real bytes queued to one peer are capped at twice the frame limit: more than any
// honest peer's backlog, and a slow reader or a flood of resync requests is closed there.
// Before the role starts, at most kMaxEarlyMessages messages and kMaxEarlyBytes bytes are kept.
#ifndef HILOSIM_DRIVERS_PROCESS_PEER_LIMITS_H
#define HILOSIM_DRIVERS_PROCESS_PEER_LIMITS_H

#include "models/workload.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace hilosim
{

constexpr size_t kMaxEarlyMessages = 4096;
constexpr uint64_t kMaxEarlyBytes = 64ull << 20;

struct PeerLimits
{
    std::map<uint32_t, uint64_t> payload_by_type; // types absent: 0 bytes
    uint64_t max_queued_bytes{0};

    /// The transport's max_payload_for.
    std::function<uint64_t(uint32_t type)> PayloadLimit() const;
};

/// "learner", "worker" or "relay" (anything else: the relay's).
PeerLimits PeerLimitsFor(const std::string& role, const models::WorkloadConfig& workload,
                         uint64_t frame_limit);

/// The bytes of one trajectory message (envelope and batch) of `workload`'s shape.
uint64_t TrajectoryMessageBytes(const models::WorkloadConfig& workload);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_PEER_LIMITS_H

// Application message types and their small binary envelopes (little-endian, hilo/core/coding.h).
//   kTrajectories  worker -> learner: u64 round, u64 behaviour version, then the batch bytes
//   kUpdate        learner -> worker (or relay): a framed hilo Update, as hilo/wire/FORMAT.md
//   kResyncRequest worker -> learner: u64 version the worker holds
//   kCatchUp       learner -> worker: u32 n; u64 snapshot length + snapshot frame (length 0: none);
//                  then n x (u64 length + update frame)
#ifndef HILOSIM_APPS_APP_MESSAGES_H
#define HILOSIM_APPS_APP_MESSAGES_H

#include "hilo/core/status.h"
#include "hilo/sync/publisher.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace hilosim
{

enum MessageType : uint32_t
{
    kTrajectories = 1,
    kUpdate = 2,
    kResyncRequest = 3,
    kCatchUp = 4,
};

struct TrajectoryEnvelope
{
    uint64_t round{0};
    uint64_t behaviour_version{0};
    std::string batch;
};

std::string EncodeTrajectories(uint64_t round, uint64_t version, const std::string& batch);
hilo::StatusOr<TrajectoryEnvelope> DecodeTrajectories(std::string_view bytes);

std::string EncodeResyncRequest(uint64_t version);
hilo::StatusOr<uint64_t> DecodeResyncRequest(std::string_view bytes);

std::string EncodeCatchUp(const hilo::CatchUpPlan& plan);
hilo::StatusOr<hilo::CatchUpPlan> DecodeCatchUp(std::string_view bytes);

} // namespace hilosim

#endif // HILOSIM_APPS_APP_MESSAGES_H

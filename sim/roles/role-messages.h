// Role message types and their small binary envelopes (little-endian, hilo/core/coding.h).
//   kTrajectories  worker -> learner: u64 round, u64 behaviour version, then the batch bytes
//   kUpdate        learner -> worker (or relay): a framed hilo Update, as hilo/wire/FORMAT.md
//   kResyncRequest worker -> learner: u64 version the worker holds, u8 flags (bit 0: start from
//                  a snapshot: the worker's state cannot be trusted, or it has none)
//   kCatchUp       learner -> worker: u32 n; u64 snapshot length + snapshot frame (length 0: none);
//                  then n x (u64 length + update frame)
//   kWelcome       learner -> a worker that (re)connected after the run moved on: u64 next round
//                  the learner needs from it, u64 the learner's version (a worker behind it
//                  then asks for a catch-up from the version it holds)
//   kDone          worker -> learner: u64 version, u64 state hash of the worker's replica, sent
//                  once it holds the last version (process runs; the simulator reads replicas)
#ifndef HILOSIM_ROLES_ROLE_MESSAGES_H
#define HILOSIM_ROLES_ROLE_MESSAGES_H

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
    kWelcome = 5,
    kDone = 6,
};

struct TrajectoryEnvelope
{
    uint64_t round{0};
    uint64_t behaviour_version{0};
    std::string batch;
};

std::string EncodeTrajectories(uint64_t round, uint64_t version, const std::string& batch);
hilo::StatusOr<TrajectoryEnvelope> DecodeTrajectories(std::string_view bytes);

struct ResyncRequest
{
    uint64_t version{0};
    bool with_snapshot{false};
};
std::string EncodeResyncRequest(uint64_t version, bool with_snapshot);
hilo::StatusOr<ResyncRequest> DecodeResyncRequest(std::string_view bytes);

std::string EncodeCatchUp(const hilo::CatchUpPlan& plan);
hilo::StatusOr<hilo::CatchUpPlan> DecodeCatchUp(std::string_view bytes);

struct Welcome
{
    uint64_t next_round{0};
    uint64_t learner_version{0};
};
std::string EncodeWelcome(uint64_t next_round, uint64_t learner_version);
hilo::StatusOr<Welcome> DecodeWelcome(std::string_view bytes);

struct DoneReport
{
    uint64_t version{0};
    uint64_t state_hash{0};
};
std::string EncodeDone(uint64_t version, uint64_t state_hash);
hilo::StatusOr<DoneReport> DecodeDone(std::string_view bytes);

} // namespace hilosim

#endif // HILOSIM_ROLES_ROLE_MESSAGES_H

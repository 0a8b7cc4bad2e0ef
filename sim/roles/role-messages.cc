#include "sim/roles/role-messages.h"

#include "hilo/core/coding.h"

namespace hilosim
{

std::string
EncodeTrajectories(uint64_t round, uint64_t version, const std::string& batch)
{
    std::string out;
    out.reserve(16 + batch.size());
    hilo::ByteWriter w(&out);
    w.PutU64(round);
    w.PutU64(version);
    w.PutBytes(batch.data(), batch.size());
    return out;
}

hilo::StatusOr<TrajectoryEnvelope>
DecodeTrajectories(std::string_view bytes)
{
    hilo::ByteReader r(bytes);
    TrajectoryEnvelope e;
    if (!r.GetU64(&e.round) || !r.GetU64(&e.behaviour_version))
    {
        return hilo::Status::Corruption("trajectory message shorter than its 16-byte header");
    }
    e.batch.assign(bytes.substr(16));
    return e;
}

std::string
EncodeResyncRequest(uint64_t version, bool with_snapshot)
{
    std::string out;
    hilo::ByteWriter w(&out);
    w.PutU64(version);
    w.PutU8(with_snapshot ? 1 : 0);
    return out;
}

hilo::StatusOr<ResyncRequest>
DecodeResyncRequest(std::string_view bytes)
{
    hilo::ByteReader r(bytes);
    ResyncRequest req;
    uint8_t flags = 0;
    if (!r.GetU64(&req.version) || !r.GetU8(&flags) || !r.empty())
    {
        return hilo::Status::Corruption("resync request is not exactly 9 bytes");
    }
    if ((flags & ~1u) != 0)
    {
        return hilo::Status::Corruption("resync request has unknown flags " +
                                        std::to_string(flags));
    }
    req.with_snapshot = (flags & 1u) != 0;
    return req;
}

std::string
EncodeCatchUp(const hilo::CatchUpPlan& plan)
{
    std::string out;
    hilo::ByteWriter w(&out);
    w.PutU32(static_cast<uint32_t>(plan.update_frames.size()));
    w.PutU64(plan.snapshot_frame.size());
    w.PutBytes(plan.snapshot_frame.data(), plan.snapshot_frame.size());
    for (const std::string& f : plan.update_frames)
    {
        w.PutU64(f.size());
        w.PutBytes(f.data(), f.size());
    }
    return out;
}

hilo::StatusOr<hilo::CatchUpPlan>
DecodeCatchUp(std::string_view bytes)
{
    hilo::ByteReader r(bytes);
    uint32_t n = 0;
    uint64_t len = 0;
    std::string_view part;
    hilo::CatchUpPlan plan;
    if (!r.GetU32(&n) || !r.GetU64(&len) || !r.GetBytes(len, &part))
    {
        return hilo::Status::Corruption("catch-up message truncated in its snapshot");
    }
    plan.snapshot_frame.assign(part);
    for (uint32_t i = 0; i < n; ++i)
    {
        if (!r.GetU64(&len) || !r.GetBytes(len, &part))
        {
            return hilo::Status::Corruption("catch-up message truncated in update " +
                                            std::to_string(i));
        }
        plan.update_frames.emplace_back(part);
    }
    if (!r.empty())
    {
        return hilo::Status::Corruption("catch-up message has trailing bytes");
    }
    return plan;
}

std::string
EncodeWelcome(uint64_t next_round, uint64_t learner_version)
{
    std::string out;
    hilo::ByteWriter w(&out);
    w.PutU64(next_round);
    w.PutU64(learner_version);
    return out;
}

hilo::StatusOr<Welcome>
DecodeWelcome(std::string_view bytes)
{
    hilo::ByteReader r(bytes);
    Welcome w;
    if (!r.GetU64(&w.next_round) || !r.GetU64(&w.learner_version) || !r.empty())
    {
        return hilo::Status::Corruption("welcome message is not exactly 16 bytes");
    }
    return w;
}

std::string
EncodeDone(uint64_t version, uint64_t state_hash)
{
    std::string out;
    hilo::ByteWriter w(&out);
    w.PutU64(version);
    w.PutU64(state_hash);
    return out;
}

hilo::StatusOr<DoneReport>
DecodeDone(std::string_view bytes)
{
    hilo::ByteReader r(bytes);
    DoneReport d;
    if (!r.GetU64(&d.version) || !r.GetU64(&d.state_hash) || !r.empty())
    {
        return hilo::Status::Corruption("done message is not exactly 16 bytes");
    }
    return d;
}

} // namespace hilosim

// libFuzzer target: a fresh Replica fed arbitrary frames through Apply, Restore and CatchUp.
// Input: [configuration byte][op byte][chunks] (fuzz-fixture.h): the configuration picks the sync
// strategy and compressor, the op what to do with the chunks, and op bit 2 fixes each chunk's
// frame header so that mutations get past the CRC.
// Invariants: every call returns a Status; a failed Apply or Restore leaves the state exactly as
// it was (version, parameters and optimizer state, bit for bit); a successful Apply advances the
// version by one; whatever happens, the replica holds a whole state of the layout's size and every
// value in it is finite.
#include "tests/fuzz/fuzz-fixture.h"

#include "hilo/sync/replica.h"

#include <cmath>
#include <cstring>

namespace
{

struct Seen
{
    uint64_t version;
    std::vector<float> theta;
    hilo::OptimizerState optimizer;
};

Seen
Look(const hilo::Replica& r)
{
    return {r.version(), r.state().adapter.theta, r.state().optimizer};
}

bool
SameFloats(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool
Same(const Seen& a, const Seen& b)
{
    return a.version == b.version && SameFloats(a.theta, b.theta) &&
           SameFloats(a.optimizer.m, b.optimizer.m) && SameFloats(a.optimizer.v, b.optimizer.v) &&
           a.optimizer.step == b.optimizer.step &&
           std::memcmp(&a.optimizer.beta1_prod, &b.optimizer.beta1_prod, sizeof(float)) == 0 &&
           std::memcmp(&a.optimizer.beta2_prod, &b.optimizer.beta2_prod, sizeof(float)) == 0;
}

void
CheckWhole(const hilo::Replica& r, int64_t numel, const char* after)
{
    const hilo::ReplicatedState& s = r.state();
    const size_t n = static_cast<size_t>(numel);
    if (s.adapter.theta.size() != n)
    {
        hilo::fuzz::Fail(std::string("after ") + after + " the replica holds " +
                         std::to_string(s.adapter.theta.size()) + " parameters, not " +
                         std::to_string(n));
    }
    if (r.strategy().ReplicasKeepOptimizer() && s.optimizer.m.size() != n)
    {
        hilo::fuzz::Fail(std::string("after ") + after + " the replica lost its optimizer state");
    }
    for (const std::vector<float>* v : {&s.adapter.theta, &s.optimizer.m, &s.optimizer.v})
    {
        for (float x : *v)
        {
            if (!std::isfinite(x))
            {
                hilo::fuzz::Fail(std::string("after ") + after +
                                 " the replica holds a non-finite value");
            }
        }
    }
}

void
CheckedApply(hilo::Replica* r, const std::string& frame)
{
    const Seen before = Look(*r);
    const hilo::Status s = r->Apply(frame);
    if (s.ok())
    {
        if (r->version() != before.version + 1)
        {
            hilo::fuzz::Fail("Apply succeeded without advancing the version by one");
        }
        return;
    }
    if (s.code() == hilo::StatusCode::kInternal || s.code() == hilo::StatusCode::kInvalidArgument)
    {
        hilo::fuzz::Fail("Apply of received bytes returned " + s.ToString());
    }
    if (!Same(before, Look(*r)))
    {
        hilo::fuzz::Fail("a failed Apply (" + s.ToString() + ") changed the replica's state");
    }
}

void
CheckedRestore(hilo::Replica* r, const std::string& frame)
{
    const Seen before = Look(*r);
    const hilo::Status s = r->Restore(frame);
    if (!s.ok() && !Same(before, Look(*r)))
    {
        hilo::fuzz::Fail("a failed Restore (" + s.ToString() + ") changed the replica's state");
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace hilo;
    if (size < 2)
    {
        return 0;
    }
    const std::vector<fuzz::ReplicaConfig>& configs = fuzz::ReplicaConfigs();
    const fuzz::ReplicaConfig& config = configs[data[0] % configs.size()];
    const uint8_t op = data[1];
    std::vector<std::string> chunks = fuzz::SplitChunks(
        std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2), /*max_chunks=*/8);
    if (op & fuzz::kFixFrames)
    {
        for (std::string& c : chunks)
        {
            c = fuzz::FixFrameHeader(c);
        }
    }

    const AdapterLayout layout = fuzz::FuzzLayout();
    StatusOr<std::unique_ptr<Replica>> made =
        Replica::Create(config.spec, layout, config.optimizer, fuzz::FuzzInitialState());
    if (!made.ok())
    {
        fuzz::Fail("fuzz table: replica does not build: " + made.status().ToString());
    }
    Replica* r = made->get();

    switch (static_cast<fuzz::ReplicaOp>(op & 3))
    {
        case fuzz::ReplicaOp::kRestore:
            if (!chunks.empty())
            {
                CheckedRestore(r, chunks.front());
                CheckWhole(*r, layout.numel(), "Restore");
            }
            for (size_t i = 1; i < chunks.size(); ++i)
            {
                CheckedApply(r, chunks[i]);
            }
            break;
        case fuzz::ReplicaOp::kCatchUp:
        {
            const std::string snapshot = chunks.empty() ? std::string() : chunks.front();
            const std::vector<std::string> updates(chunks.begin() + (chunks.empty() ? 0 : 1),
                                                   chunks.end());
            const Status s = r->CatchUp(snapshot, updates);
            if (s.code() == StatusCode::kInternal || s.code() == StatusCode::kInvalidArgument)
            {
                fuzz::Fail("CatchUp of received bytes returned " + s.ToString());
            }
            break;
        }
        default:
            for (const std::string& c : chunks)
            {
                CheckedApply(r, c);
            }
            break;
    }
    CheckWhole(*r, layout.numel(), "the last call");
    const ReplicaStats& stats = r->stats();
    if (stats.applied != r->version() && r->stats().restores == 0)
    {
        fuzz::Fail("the replica reached version " + std::to_string(r->version()) + " after " +
                   std::to_string(stats.applied) + " applied updates and no restore");
    }
    return 0;
}

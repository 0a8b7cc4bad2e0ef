// libFuzzer target: the learner's restart paths, Compressor::RestoreLocalState of every compressor
// configuration and Publisher::Restore under every replica configuration, on arbitrary bytes.
// Input: [target byte][bytes] (fuzz-fixture.h).
// Invariants, RestoreLocalState: ok or kCorruption; a refused state leaves the instance's local
// state exactly as it was; an accepted one saves back to the same bytes, and the restored encoder
// then encodes a fixed gradient into a payload that decodes to finite values.
// Publisher::Restore: never kInternal; an accepted checkpoint saves back to the same bytes, holds
// only finite parameters and moments, and its next Step either fails with a typed error or
// publishes a frame that a replica restored from its latest snapshot and ring accepts, ending on
// the publisher's replica view, all finite.
#include "tests/fuzz/fuzz-fixture.h"

#include "hilo/compress/base-aware.h"
#include "hilo/core/finite.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"

#include <cstring>

namespace
{

std::vector<float>
FixedGradient(int64_t numel)
{
    std::vector<float> g(static_cast<size_t>(numel));
    for (size_t i = 0; i < g.size(); ++i)
    {
        g[i] = 1e-3f * static_cast<float>(static_cast<int>(i % 7) - 3);
    }
    return g;
}

bool
Finite(const std::vector<float>& v)
{
    return hilo::AllFinite(v.data(), static_cast<int64_t>(v.size()));
}

void
FuzzLocalState(size_t i, std::string_view bytes)
{
    using namespace hilo;
    const std::string name = std::string(fuzz::CompressorConfigs()[i].kind) + " (" +
                             fuzz::CompressorConfigs()[i].options + ")";
    std::unique_ptr<Compressor> c = fuzz::MakeCompressor(i);
    const std::string before = c->SaveLocalState();
    const Status s = c->RestoreLocalState(bytes);
    if (!s.ok())
    {
        if (s.code() != StatusCode::kCorruption)
        {
            fuzz::Fail(name + ": RestoreLocalState returned " + s.ToString());
        }
        if (c->SaveLocalState() != before)
        {
            fuzz::Fail(name + ": a refused local state changed the encoder");
        }
        return;
    }
    if (c->SaveLocalState() != bytes)
    {
        fuzz::Fail(name + ": an accepted local state does not save back to the same bytes");
    }
    const AdapterState base = fuzz::FuzzInitialState();
    if (auto* b = dynamic_cast<BaseAwareCompressor*>(c.get()))
    {
        b->SetBase(&base.theta);
    }
    const StatusOr<Encoded> e = c->Encode(FixedGradient(c->layout().numel()), int64_t{1} << 20);
    if (!e.ok())
    {
        if (e.status().code() == StatusCode::kInternal)
        {
            fuzz::Fail(name + ": encode after an accepted restore: " + e.status().ToString());
        }
        return;
    }
    std::vector<float> out;
    const Status d = c->Decode(e->payload, &out);
    if (!d.ok() || !Finite(out))
    {
        fuzz::Fail(name +
                   ": after an accepted restore the encoder's payload does not decode to "
                   "finite values: " +
                   d.ToString());
    }
}

void
FuzzCheckpoint(size_t j, std::string_view bytes)
{
    using namespace hilo;
    const fuzz::ReplicaConfig& config = fuzz::ReplicaConfigs()[j];
    const AdapterLayout layout = fuzz::FuzzLayout();
    const PublisherOptions options{fuzz::kRestoreRing, fuzz::kRestoreSnapshotInterval};
    StatusOr<std::unique_ptr<Publisher>> restored =
        Publisher::Restore(config.spec, layout, config.optimizer, bytes, options);
    if (!restored.ok())
    {
        if (restored.status().code() == StatusCode::kInternal)
        {
            fuzz::Fail("Publisher::Restore returned " + restored.status().ToString());
        }
        return;
    }
    Publisher& p = **restored;
    if (p.Checkpoint() != bytes)
    {
        fuzz::Fail("an accepted checkpoint does not save back to the same bytes");
    }
    for (const ReplicatedState* s : {&p.train_state(), &p.replica_view(), p.master_state()})
    {
        if (s != nullptr &&
            !(Finite(s->adapter.theta) && Finite(s->optimizer.m) && Finite(s->optimizer.v)))
        {
            fuzz::Fail("an accepted checkpoint holds a non-finite value");
        }
    }
    const StatusOr<PublishedUpdate> u = p.Step(FixedGradient(layout.numel()));
    if (!u.ok())
    {
        if (u.status().code() == StatusCode::kInternal)
        {
            fuzz::Fail("Step after an accepted restore returned " + u.status().ToString());
        }
        return;
    }
    if (!Finite(p.replica_view().adapter.theta))
    {
        fuzz::Fail("Step after an accepted restore published a non-finite state");
    }
    // A replica that catches up from the restored publisher's own snapshot and ring must accept
    // the new frame too, or refuse it with a typed error; it never ends on a non-finite value.
    StatusOr<std::unique_ptr<Replica>> r =
        Replica::Create(config.spec, layout, config.optimizer, fuzz::FuzzInitialState());
    if (!r.ok())
    {
        fuzz::Fail("fuzz table: replica does not build: " + r.status().ToString());
    }
    StatusOr<CatchUpPlan> plan = p.CatchUpFrom(0, /*with_snapshot=*/true);
    if (plan.ok())
    {
        const Status s = (*r)->CatchUp(plan->snapshot_frame, plan->update_frames);
        if (s.code() == StatusCode::kInternal || s.code() == StatusCode::kInvalidArgument)
        {
            fuzz::Fail("CatchUp from a restored publisher returned " + s.ToString());
        }
    }
    if (!Finite((*r)->state().adapter.theta) || !Finite((*r)->state().optimizer.m) ||
        !Finite((*r)->state().optimizer.v))
    {
        fuzz::Fail("a replica caught up from a restored publisher holds a non-finite value");
    }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace hilo;
    if (size < 1)
    {
        return 0;
    }
    const size_t compressors = fuzz::CompressorConfigs().size();
    const size_t targets = compressors + fuzz::ReplicaConfigs().size();
    const size_t t = data[0] % targets;
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (t < compressors)
    {
        FuzzLocalState(t, bytes);
    }
    else
    {
        FuzzCheckpoint(t - compressors, bytes);
    }
    return 0;
}

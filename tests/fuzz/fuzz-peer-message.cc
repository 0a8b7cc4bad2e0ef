// libFuzzer target: what a peer sends a role, checked where it arrives: the role envelopes
// (sim/roles/role-messages.h) and the trajectory batch inside a worker's message
// (models/trajectory-batch.h), with the learner's check against the workload
// (sim/roles/trajectory-check.h).
// Input: [mode byte][message]. Mode % 6 picks the decoder: 0 a bare trajectory batch, 1 a
// trajectory message (envelope + batch), 2 a resync request, 3 a catch-up, 4 a welcome, 5 a done
// report. Mode bit 3 rewrites a batch's trailing CRC-32C to match its bytes, so mutated bodies
// reach the checks behind it.
// Invariants: every decoder returns a Status (no crash, no sanitizer report, no allocation
// beyond the input's size); an accepted message re-encodes to exactly its own bytes (every
// encoding is canonical); a batch the learner's check accepts parses, and is the workload's:
// its kind, shape, round and worker.
#include "tests/fuzz/fuzz-fixture.h"

#include "models/trajectory-batch.h"
#include "models/workload.h"
#include "sim/roles/role-messages.h"
#include "sim/roles/trajectory-check.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

#include <cstring>

namespace
{

// The workload the fuzzed learner expects (tests/fuzz/write-seeds.cc writes batches for it).
models::WorkloadConfig
FuzzWorkload()
{
    models::WorkloadConfig c;
    c.kind = "distill";
    c.vocab = 64;
    c.prompt_tokens = 4;
    c.gen_tokens = 6;
    c.group_size = 2;
    c.prompts_per_worker = 2;
    return c;
}

constexpr uint64_t kRound = 3;
constexpr uint32_t kWorker = 1;

std::string
FixBatchCrc(std::string_view batch)
{
    std::string out(batch);
    if (out.size() < 4)
        return out;
    const uint32_t crc = hilo::Crc32c(out.data(), out.size() - 4);
    std::string tail;
    hilo::ByteWriter w(&tail);
    w.PutU32(crc);
    std::memcpy(&out[out.size() - 4], tail.data(), 4);
    return out;
}

void
CheckBatch(std::string_view batch)
{
    using hilo::fuzz::Fail;
    auto parsed = models::TrajectoryBatch::Parse(batch);
    if (parsed.ok())
    {
        if (!parsed->Validate().ok())
            Fail("Parse accepted a batch Validate refuses");
        if (parsed->Serialize() != batch)
            Fail("an accepted batch does not re-serialize to its own bytes");
    }
    static const models::WorkloadConfig config = FuzzWorkload();
    const hilo::Status checked = hilosim::CheckTrajectoryBatch(config, batch, kRound, kWorker);
    if (!checked.ok())
        return;
    if (!parsed.ok())
        Fail("the learner's check accepted a batch that does not parse");
    const models::TrajectoryBatch& b = *parsed;
    if (b.kind != models::WorkloadKind::kDistill || b.step != kRound || b.worker != kWorker ||
        b.prompt_len != 4 || b.gen_len != 6 || b.group_size != 2 || b.vocab != 64 ||
        b.sequences != 4)
        Fail("the learner's check accepted a batch that is not the workload's");
}

template<typename T, typename Encode>
void
RoundTrip(const hilo::StatusOr<T>& decoded, std::string_view bytes, Encode encode,
          const char* what)
{
    if (decoded.ok() && encode(*decoded) != bytes)
        hilo::fuzz::Fail(std::string("an accepted ") + what + " does not re-encode to its bytes");
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t mode = data[0];
    const std::string_view msg(reinterpret_cast<const char*>(data) + 1, size - 1);
    const bool fix_crc = (mode & 8u) != 0;
    switch (mode % 6)
    {
    case 0:
        CheckBatch(fix_crc ? FixBatchCrc(msg) : std::string(msg));
        break;
    case 1:
    {
        auto e = hilosim::DecodeTrajectories(msg);
        RoundTrip(e, msg,
                  [](const hilosim::TrajectoryEnvelope& t)
                  { return hilosim::EncodeTrajectories(t.round, t.behaviour_version, t.batch); },
                  "trajectory message");
        if (e.ok())
            CheckBatch(fix_crc ? FixBatchCrc(e->batch) : e->batch);
        break;
    }
    case 2:
        RoundTrip(hilosim::DecodeResyncRequest(msg), msg,
                  [](const hilosim::ResyncRequest& r)
                  { return hilosim::EncodeResyncRequest(r.version, r.with_snapshot); },
                  "resync request");
        break;
    case 3:
        RoundTrip(hilosim::DecodeCatchUp(msg), msg,
                  [](const hilo::CatchUpPlan& p) { return hilosim::EncodeCatchUp(p); },
                  "catch-up");
        break;
    case 4:
        RoundTrip(hilosim::DecodeWelcome(msg), msg,
                  [](const hilosim::Welcome& w)
                  { return hilosim::EncodeWelcome(w.next_round, w.learner_version); },
                  "welcome");
        break;
    case 5:
        RoundTrip(hilosim::DecodeDone(msg), msg,
                  [](const hilosim::DoneReport& d)
                  { return hilosim::EncodeDone(d.version, d.state_hash); },
                  "done report");
        break;
    }
    return 0;
}

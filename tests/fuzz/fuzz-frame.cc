// libFuzzer target: frame parsing and the Update and Snapshot decoders behind it.
// Input: [mode byte][frame]. Mode bit 0 rewrites the header's length and CRC to match the bytes
// that follow (FixFrameHeader), so mutated bodies reach the Protobuf parsers; bits 1-2 pick the
// layout size snapshots are checked against (12, 0, 1 or 4 values).
// Invariants: every decoder returns a Status; an accepted frame re-encodes to exactly its own
// bytes; an accepted Update or Snapshot re-encodes and decodes to the same contents.
#include "tests/fuzz/fuzz-fixture.h"

#include "hilo/core/value-dtype.h"
#include "hilo/wire/messages.h"

#include <cstring>

namespace
{

bool
SameFloats(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void
CheckUpdate(std::string_view frame)
{
    using namespace hilo;
    StatusOr<wire::Update> u = DecodeUpdateFrame(frame);
    if (!u.ok())
    {
        return;
    }
    if (u->version() != u->base_version() + 1 || u->format_version() != kFormatVersion)
    {
        fuzz::Fail("accepted an Update with inconsistent versions");
    }
    StatusOr<std::string> again = EncodeUpdateFrame(*u);
    if (!again.ok())
    {
        fuzz::Fail("accepted Update does not re-encode: " + again.status().ToString());
    }
    StatusOr<wire::Update> back = DecodeUpdateFrame(*again);
    if (!back.ok() || back->SerializeAsString() != u->SerializeAsString())
    {
        fuzz::Fail("accepted Update does not survive a re-encode");
    }
}

void
CheckSnapshot(std::string_view frame, int64_t numel)
{
    using namespace hilo;
    StatusOr<DecodedSnapshot> s = DecodeSnapshotFrame(frame, numel);
    if (!s.ok())
    {
        return;
    }
    const ReplicatedState& st = s->state;
    const size_t n = static_cast<size_t>(numel);
    if (st.adapter.theta.size() != n || (!st.optimizer.m.empty() && st.optimizer.m.size() != n) ||
        (!st.optimizer.v.empty() && st.optimizer.v.size() != n))
    {
        fuzz::Fail("accepted a Snapshot whose sizes do not match the layout");
    }
    StatusOr<std::string> again = EncodeSnapshotFrame(st, s->config_hash);
    if (!again.ok())
    {
        fuzz::Fail("accepted Snapshot does not re-encode: " + again.status().ToString());
    }
    StatusOr<DecodedSnapshot> back = DecodeSnapshotFrame(*again, numel);
    if (!back.ok())
    {
        fuzz::Fail("accepted Snapshot does not decode after a re-encode: " +
                   back.status().ToString());
    }
    const ReplicatedState& b = back->state;
    if (back->config_hash != s->config_hash || b.adapter.version != st.adapter.version ||
        b.optimizer.step != st.optimizer.step ||
        FloatBits(b.optimizer.beta1_prod) != FloatBits(st.optimizer.beta1_prod) ||
        FloatBits(b.optimizer.beta2_prod) != FloatBits(st.optimizer.beta2_prod) ||
        !SameFloats(b.adapter.theta, st.adapter.theta) ||
        !SameFloats(b.optimizer.m, st.optimizer.m) || !SameFloats(b.optimizer.v, st.optimizer.v))
    {
        fuzz::Fail("accepted Snapshot changes across a re-encode");
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
    const uint8_t mode = data[0];
    std::string frame(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (mode & 1)
    {
        frame = fuzz::FixFrameHeader(frame);
    }
    static constexpr int64_t kNumels[4] = {12, 0, 1, 4};
    const int64_t numel = kNumels[(mode >> 1) & 3];

    StatusOr<uint64_t> peek = PeekFrameBodyLength(frame);
    StatusOr<FrameView> view = DecodeFrame(frame);
    if (view.ok())
    {
        if (!peek.ok() || *peek != view->body.size())
        {
            fuzz::Fail("DecodeFrame accepted a frame whose header PeekFrameBodyLength refuses");
        }
        StatusOr<std::string> again = EncodeFrame(view->kind, view->body);
        if (!again.ok() || *again != frame)
        {
            fuzz::Fail("an accepted frame does not re-encode to its own bytes");
        }
    }
    CheckUpdate(frame);
    CheckSnapshot(frame, numel);
    return 0;
}

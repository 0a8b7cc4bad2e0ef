// No forged update can put a NaN or an infinity into a replica. Each case forges a frame that is
// valid in every other respect: right config, versions, compressor, payload layout, and a state
// hash equal to the hash of the state an unchecked decode + replay would produce (so the hash check
// alone would accept it). The payload's values are finite on the wire but overflow when decoded
// (a finite int8 or low-bit scale times a code, a low-rank sum of finite terms), when replayed
// (g * g), or when added to the parameters (delta). The replica must answer kCorruption and keep
// theta, m, v, step and version exactly as they were.
#include "hilo/compress/factor-coding.h"
#include "hilo/core/coding.h"
#include "hilo/optim/replay.h"
#include "hilo/sync/replica.h"
#include "hilo/wire/messages.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace hilo
{
namespace
{

struct Seen
{
    uint64_t version;
    uint64_t theta_hash;
    uint64_t opt_hash;
    uint64_t step;
    std::vector<float> theta;
    std::vector<float> m;
    std::vector<float> v;
};

Seen
Look(const Replica& r)
{
    const ReplicatedState& s = r.state();
    return {s.adapter.version, s.adapter.Hash(), s.optimizer.Hash(), s.optimizer.step,
            s.adapter.theta,   s.optimizer.m,    s.optimizer.v};
}

void
ExpectUnchanged(const Seen& before, const Replica& r)
{
    const Seen now = Look(r);
    EXPECT_EQ(now.version, before.version);
    EXPECT_EQ(now.theta_hash, before.theta_hash);
    EXPECT_EQ(now.opt_hash, before.opt_hash);
    EXPECT_EQ(now.step, before.step);
    ASSERT_EQ(now.theta.size(), before.theta.size());
    EXPECT_EQ(std::memcmp(now.theta.data(), before.theta.data(), now.theta.size() * 4), 0);
    EXPECT_EQ(now.m, before.m);
    EXPECT_EQ(now.v, before.v);
    for (float x : now.theta)
    {
        ASSERT_TRUE(std::isfinite(x));
    }
}

/// The frame a learner would send for `payload` on top of the replica's current version,
/// claiming `state_hash`.
std::string
Frame(const Replica& r, const std::string& payload, uint64_t state_hash)
{
    wire::Update u;
    u.set_format_version(kFormatVersion);
    u.set_version(r.version() + 1);
    u.set_base_version(r.version());
    u.set_strategy(static_cast<wire::SyncKind>(r.strategy().kind()));
    u.set_compressor(r.strategy().compressor().Name());
    u.set_compressor_params(r.strategy().compressor().Params());
    u.set_payload(payload);
    u.set_state_hash(state_hash);
    u.set_config_hash(r.config_hash());
    return EncodeUpdateFrame(u).value();
}

/// Hash of the parameters an unchecked hilo replica would reach by replaying `decoded`.
uint64_t
ReplayedHash(const OptimizerConfig& opt, const ReplicatedState& in,
             const std::vector<float>& decoded)
{
    ReplicatedState out;
    (void) ReplayStep(opt, in, decoded, &out);
    return out.adapter.Hash();
}

class NonFinite : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        layout = testing::SmallLayout(); // a: 4 x 16, b: 16 x 4
        init = testing::InitialState(layout, 3);
    }

    std::unique_ptr<Replica> Make(SyncKind kind, const std::string& compressor,
                                  CompressorOptions options = {})
    {
        SyncSpec spec;
        spec.kind = kind;
        spec.compressor = compressor;
        spec.compressor_options = std::move(options);
        return Replica::Create(spec, layout, opt, init).value();
    }

    /// Applies a frame that must be refused as corrupt without any change to the replica.
    void ExpectRejected(Replica* r, const std::string& frame)
    {
        const Seen before = Look(*r);
        const Status s = r->Apply(frame);
        EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
        ExpectUnchanged(before, *r);
    }

    /// The decoded values of a low-rank payload whose matrix 0 has `k0` triplets of constant
    /// vectors `left` (rows) and `right` (cols) and matrix 1 none: what an unchecked decoder
    /// would produce.
    std::vector<float> LowRankDecoded(int64_t k0, float left, float right) const
    {
        const MatrixSpec& a = layout.matrix(0);
        std::vector<float> l(static_cast<size_t>(k0 * a.rows), left);
        std::vector<float> rt(static_cast<size_t>(k0 * a.cols), right);
        std::vector<float> out(static_cast<size_t>(layout.numel()), 0.0f);
        (void) LowRankReconstruct(a.rows, a.cols, k0, l.data(), rt.data(), out.data());
        return out;
    }

    AdapterLayout layout;
    OptimizerConfig opt;
    AdapterState init;
};

TEST_F(NonFinite, DenseNanAndInfinityAreRefused)
{
    auto r = Make(SyncKind::kHilo, "dense");
    for (float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()})
    {
        std::vector<float> g(static_cast<size_t>(layout.numel()), 1e-3f);
        g[7] = bad;
        std::string payload;
        ByteWriter w(&payload);
        w.PutU8(static_cast<uint8_t>(ValueDtype::kFp32));
        w.PutFloats(g.data(), g.size(), ValueDtype::kFp32);
        ExpectRejected(r.get(), Frame(*r, payload, ReplayedHash(opt, r->state(), g)));
    }
}

TEST_F(NonFinite, FiniteGradientWhoseReplayOverflowsIsRefused)
{
    // 1e20 is a finite fp32 value, but g * g = 1e40 overflows the second moment.
    auto r = Make(SyncKind::kHilo, "dense");
    std::vector<float> g(static_cast<size_t>(layout.numel()), 1e-3f);
    g[5] = 1e20f;
    std::string payload;
    ByteWriter w(&payload);
    w.PutU8(static_cast<uint8_t>(ValueDtype::kFp32));
    w.PutFloats(g.data(), g.size(), ValueDtype::kFp32);
    ExpectRejected(r.get(), Frame(*r, payload, ReplayedHash(opt, r->state(), g)));
}

TEST_F(NonFinite, PowerSgdLowRankSumOverflowIsRefused)
{
    // Two rank-1 terms of 3e19 * 1e19 = 3e38 each (finite); their sum 6e38 is not.
    auto r = Make(SyncKind::kHilo, "powersgd", {{"dtype", "fp32"}});
    const int64_t k = 2;
    std::string payload;
    ByteWriter w(&payload);
    w.PutU8(static_cast<uint8_t>(ValueDtype::kFp32));
    w.PutVarint(layout.size());
    w.PutVarint(k);
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        for (int64_t j = 0; j < k; ++j)
        {
            const std::vector<float> left(static_cast<size_t>(s.rows), i == 0 ? 3e19f : 0.0f);
            const std::vector<float> right(static_cast<size_t>(s.cols), i == 0 ? 1e19f : 0.0f);
            w.PutFloats(left.data(), left.size(), ValueDtype::kFp32);
            w.PutFloats(right.data(), right.size(), ValueDtype::kFp32);
        }
    }
    const std::vector<float> decoded = LowRankDecoded(k, 3e19f, 1e19f);
    ASSERT_TRUE(std::isinf(decoded[0]));
    ExpectRejected(r.get(), Frame(*r, payload, ReplayedHash(opt, r->state(), decoded)));
}

TEST_F(NonFinite, Int8FactorScaleTimesCodeOverflowIsRefused)
{
    // A finite int8 scale of 1e37 times the code 127 is 1.27e39: infinite once decoded.
    auto r = Make(SyncKind::kHilo, "powersgd", {{"dtype", "int8"}});
    const int64_t k = 1;
    std::string payload;
    ByteWriter w(&payload);
    w.PutU8(static_cast<uint8_t>(ValueDtype::kInt8));
    w.PutVarint(layout.size());
    w.PutVarint(k);
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        for (int64_t n : {s.rows, s.cols})
        {
            w.PutF32(i == 0 ? 1e37f : 0.0f);
            const std::string codes(static_cast<size_t>(n), i == 0 ? '\x7f' : '\0');
            w.PutBytes(codes.data(), codes.size());
        }
    }
    const std::vector<float> decoded = LowRankDecoded(k, 1e37f * 127.0f, 1e37f * 127.0f);
    ExpectRejected(r.get(), Frame(*r, payload, ReplayedHash(opt, r->state(), decoded)));
}

TEST_F(NonFinite, SparqLowBitScaleTimesCodeOverflowIsRefused)
{
    // bits=8 (L = 127), one scale per vector: the finite scale FLT_MAX times the code 1 stays
    // finite per factor (FLT_MAX), but the reconstruction FLT_MAX * FLT_MAX overflows.
    auto r = Make(SyncKind::kHilo, "sparq", {{"bits", "8"}});
    std::string payload;
    ByteWriter w(&payload);
    w.PutU8(8);
    w.PutVarint(0); // block
    w.PutVarint(layout.size());
    w.PutVarint(1); // k of matrix a
    w.PutVarint(0); // k of matrix b
    const MatrixSpec& a = layout.matrix(0);
    for (int64_t n : {a.rows, a.cols})
    {
        w.PutF32(FLT_MAX);
        const std::string codes(static_cast<size_t>(n), static_cast<char>(127 + 1)); // q = +1
        w.PutBytes(codes.data(), codes.size());
    }
    const std::vector<float> decoded = LowRankDecoded(1, FLT_MAX, FLT_MAX);
    ExpectRejected(r.get(), Frame(*r, payload, ReplayedHash(opt, r->state(), decoded)));
}

TEST_F(NonFinite, SparLowRankSumOverflowIsRefused)
{
    // spar: sigma * u scales the left vector; sigma = 1e30 and u = v = 1e5 give 1e40.
    auto r = Make(SyncKind::kHilo, "spar", {{"dtype", "fp32"}});
    std::string payload;
    ByteWriter w(&payload);
    w.PutU8(static_cast<uint8_t>(ValueDtype::kFp32));
    w.PutVarint(layout.size());
    w.PutVarint(1);
    w.PutVarint(0);
    const MatrixSpec& a = layout.matrix(0);
    w.PutF32(1e30f);
    const std::vector<float> left(static_cast<size_t>(a.rows), 1e5f);
    const std::vector<float> right(static_cast<size_t>(a.cols), 1e5f);
    w.PutFloats(left.data(), left.size(), ValueDtype::kFp32);
    w.PutFloats(right.data(), right.size(), ValueDtype::kFp32);
    const std::vector<float> decoded = LowRankDecoded(1, 1e30f * 1e5f, 1e5f);
    ExpectRejected(r.get(), Frame(*r, payload, ReplayedHash(opt, r->state(), decoded)));
}

TEST_F(NonFinite, DeltaSumThatOverflowsIsRefused)
{
    // delta: the first change moves every parameter to about FLT_MAX (finite, accepted); adding
    // it again overflows.
    auto r = Make(SyncKind::kDelta, "dense");
    std::vector<float> d(static_cast<size_t>(layout.numel()), FLT_MAX);
    std::string payload;
    ByteWriter w(&payload);
    w.PutU8(static_cast<uint8_t>(ValueDtype::kFp32));
    w.PutFloats(d.data(), d.size(), ValueDtype::kFp32);
    AdapterState next = r->state().adapter;
    for (size_t i = 0; i < next.theta.size(); ++i)
    {
        next.theta[i] = next.theta[i] + d[i];
    }
    ASSERT_TRUE(r->Apply(Frame(*r, payload, next.Hash())).ok());
    for (size_t i = 0; i < next.theta.size(); ++i)
    {
        next.theta[i] = next.theta[i] + d[i];
    }
    ASSERT_TRUE(std::isinf(next.theta[0]));
    ExpectRejected(r.get(), Frame(*r, payload, next.Hash()));
}

TEST_F(NonFinite, QuantScaleThatOverflowsItsCodesIsRefused)
{
    // qsgd with 7 levels: step = scale / 7, and 7 * (FLT_MAX / 7) rounds up to infinity for
    // FLT_MAX; FLT_MAX as a block scale must therefore be refused even though it is finite.
    auto r = Make(SyncKind::kHilo, "quant", {{"levels", "127"}, {"block", "1024"}});
    std::string payload;
    ByteWriter w(&payload);
    w.PutU8(0);   // scheme qsgd
    w.PutU8(127); // levels
    w.PutU8(0);   // norm max
    w.PutVarint(1024);
    w.PutF32(FLT_MAX); // one block per matrix (64 values each)
    w.PutF32(1.0f);
    std::string codes(static_cast<size_t>(layout.numel()), '\0');
    codes[0] = 127;
    w.PutBytes(codes.data(), codes.size());
    std::vector<float> decoded(static_cast<size_t>(layout.numel()), 0.0f);
    decoded[0] = 127.0f * (FLT_MAX / 127.0f);
    if (std::isfinite(decoded[0]))
    {
        GTEST_SKIP() << "127 * (FLT_MAX / 127) rounds to a finite value on this host";
    }
    ExpectRejected(r.get(), Frame(*r, payload, ReplayedHash(opt, r->state(), decoded)));
}

TEST_F(NonFinite, SnapshotWithNanIsRefused)
{
    auto r = Make(SyncKind::kHilo, "dense");
    ReplicatedState s = r->state();
    s.adapter.version = 4;
    s.optimizer.v[3] = std::numeric_limits<float>::quiet_NaN();
    const std::string frame = EncodeSnapshotFrame(s, r->config_hash()).value();
    const Seen before = Look(*r);
    EXPECT_EQ(r->Restore(frame).code(), StatusCode::kCorruption);
    ExpectUnchanged(before, *r);
}

TEST(NonFiniteReplay, ReplayStepReportsOverflow)
{
    OptimizerConfig opt;
    ReplicatedState in;
    in.adapter.theta.assign(70000, 0.5f); // above the replay's grain: two chunks on two threads
    in.optimizer = NewOptimizerState(opt, 70000);
    std::vector<float> g(70000, 1e-3f);
    ReplicatedState out;
    EXPECT_TRUE(ReplayStep(opt, in, g, &out).ok());
    g[69999] = 1e20f;
    EXPECT_EQ(ReplayStep(opt, in, g, &out).code(), StatusCode::kCorruption);
    EXPECT_EQ(ReplayStep(opt, in, g, &in).code(), StatusCode::kCorruption); // in place too
}

} // namespace
} // namespace hilo

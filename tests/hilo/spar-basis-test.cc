// spar's basis=replicated (hilo/compress/replicated-basis.h, payload spar-rb-v1 in
// hilo/compress/spar.h): the basis is orthonormal and spans Adam's first moment, it is the same
// bits on every instruction set and thread count, replicas stay bit-identical to the learner on
// 1 and 2 threads, a slowly changing gradient costs fewer bytes for the same error than fresh
// triplets, the coefficients keep within basis_share, and bad payloads and options are refused.
#include "hilo/compress/compressor-factory.h"
#include "hilo/compress/replay-aware.h"
#include "hilo/compress/replicated-basis.h"
#include "hilo/core/coding.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "hilo/sync/sync-strategy.h"
#include "hilo/wire/messages.h"
#include "tests/hilo/test-util.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace hilo
{
namespace
{

using testing::Adam;
using testing::SameBytes;
using testing::SplitMix;
using testing::SupportedIsas;

SyncSpec
HiloSpec(const std::string& options, Budget budget)
{
    return testing::HiloSpec("spar", options, budget);
}

/// A narrow pair (m = 4, the identity start) and a wide pair (m = 24 > 16, the power step).
AdapterLayout
Layout()
{
    return AdapterLayout::Create({{"l0.q.lora_A", 4, 40},
                                  {"l0.q.lora_B", 40, 4},
                                  {"l0.v.lora_A", 24, 200},
                                  {"l0.v.lora_B", 200, 24}})
        .value();
}

/// Matrix i of `x` = sum over r < rank of a_r b_r^T (random), seen as stored.
std::vector<float>
LowRank(const AdapterLayout& layout, int64_t rank, uint64_t seed)
{
    SplitMix rng(seed);
    std::vector<float> x(static_cast<size_t>(layout.numel()), 0.0f);
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        float* out = x.data() + layout.offset(i);
        for (int64_t r = 0; r < rank; ++r)
        {
            std::vector<float> a(static_cast<size_t>(s.rows)), b(static_cast<size_t>(s.cols));
            for (float& v : a)
                v = rng.Uniform() - 0.5f;
            for (float& v : b)
                v = rng.Uniform() - 0.5f;
            for (int64_t p = 0; p < s.rows; ++p)
                for (int64_t q = 0; q < s.cols; ++q)
                    out[p * s.cols + q] += a[static_cast<size_t>(p)] * b[static_cast<size_t>(q)];
        }
    }
    return x;
}

TEST(SparBasis, DirectionsAreOrthonormalAndSpanTheFirstMoment)
{
    const AdapterLayout layout = Layout();
    const std::vector<float> m = LowRank(layout, 3, 5);
    const ReplicatedBasis basis = DeriveReplicatedBasis(layout, m, 0);
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        const int64_t d = std::max(s.rows, s.cols);
        // Rank 3: three directions, whatever the start (identity or the power step).
        ASSERT_EQ(basis.width[i], 3) << i;
        const float* v = basis.vectors.data() + basis.at[i];
        for (int64_t a = 0; a < 3; ++a)
            for (int64_t b = 0; b < 3; ++b)
            {
                double dot = 0.0;
                for (int64_t t = 0; t < d; ++t)
                    dot += static_cast<double>(v[a * d + t]) * v[b * d + t];
                EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << i << " " << a << " " << b;
            }
    }
    // M's rows (long side) lie in the span: projecting them out leaves rounding only.
    std::vector<float> residual;
    const BasisProjection p = ProjectOntoBasis(layout, basis, m, &residual);
    double before = 0.0, after = 0.0, gains = 0.0;
    for (size_t k = 0; k < m.size(); ++k)
    {
        before += static_cast<double>(m[k]) * m[k];
        after += static_cast<double>(residual[k]) * residual[k];
    }
    for (double g : p.gains)
        gains += g;
    EXPECT_LT(after, 1e-9 * before);
    EXPECT_NEAR(gains, before, 1e-5 * before);
    // basis_width caps it; a zero first moment gives none.
    const ReplicatedBasis capped = DeriveReplicatedBasis(layout, m, 2);
    for (int64_t w : capped.width)
        EXPECT_EQ(w, 2);
    const ReplicatedBasis none =
        DeriveReplicatedBasis(layout, std::vector<float>(m.size(), 0.0f), 0);
    for (int64_t w : none.width)
        EXPECT_EQ(w, 0);
}

TEST(SparBasis, SameBitsOnEveryInstructionSetAndThreadCount)
{
    const AdapterLayout layout = Layout();
    // Full rank: every eigenvalue and the power step matter.
    SplitMix rng(17);
    std::vector<float> m;
    testing::FillGradient(layout, &rng, &m);
    const int saved = at::get_num_threads();
    at::set_num_threads(1);
    const ReplicatedBasis want = DeriveReplicatedBasis(layout, m, 0, SketchIsa::kPortable);
    ASSERT_GT(want.vectors.size(), 0u);
    for (int threads : {1, 2})
    {
        at::set_num_threads(threads);
        for (SketchIsa isa : SupportedIsas())
        {
            const ReplicatedBasis got = DeriveReplicatedBasis(layout, m, 0, isa);
            EXPECT_EQ(got.width, want.width);
            EXPECT_TRUE(SameBytes(got.vectors, want.vectors))
                << "isa " << static_cast<int>(isa) << ", " << threads << " threads";
        }
    }
    at::set_num_threads(saved);
}

/// The coefficient entries of a spar-rb-v1 payload, per matrix.
std::vector<int64_t>
Coefficients(const std::string& payload, size_t matrices)
{
    ByteReader r(payload);
    uint8_t dtype = 0;
    uint64_t count = 0, k = 0;
    EXPECT_TRUE(r.GetU8(&dtype) && r.GetVarint(&count) && count == matrices);
    for (size_t i = 0; i < matrices; ++i)
        EXPECT_TRUE(r.GetVarint(&k));
    std::vector<int64_t> cs(matrices);
    for (size_t i = 0; i < matrices; ++i)
    {
        EXPECT_TRUE(r.GetVarint(&k));
        cs[i] = static_cast<int64_t>(k);
    }
    return cs;
}

/// Publisher -> Replica for `steps` versions of a slowly turning low-rank gradient; every
/// version's replica state must equal the learner's bit for bit. Returns the final state hash
/// (0 on failure); `coefficients` counts the coefficient entries shipped.
uint64_t
Lockstep(const std::string& options, int threads, int steps, int64_t* coefficients)
{
    const int saved = at::get_num_threads();
    at::set_num_threads(threads);
    const AdapterLayout layout = Layout();
    const SyncSpec spec = HiloSpec(options, Budget::Fraction(0.05));
    const OptimizerConfig opt = Adam();
    const AdapterState init = testing::InitialState(layout, 11);
    auto publisher = Publisher::Create(spec, layout, opt, init);
    auto replica = Replica::Create(spec, layout, opt, init);
    uint64_t hash = 0;
    *coefficients = 0;
    const std::vector<float> base = LowRank(layout, 2, 1);
    SplitMix rng(99);
    if (publisher.ok() && replica.ok())
    {
        std::vector<float> noise;
        for (int step = 1; step <= steps; ++step)
        {
            testing::FillGradient(layout, &rng, &noise);
            std::vector<float> grad(base.size());
            for (size_t k = 0; k < grad.size(); ++k)
                grad[k] = base[k] + 0.05f * noise[k];
            StatusOr<PublishedUpdate> u = (*publisher)->Step(grad);
            if (!u.ok() || !(*replica)->Apply(u->frame).ok())
            {
                ADD_FAILURE() << options << ": step " << step;
                break;
            }
            const ReplicatedState& want = (*publisher)->replica_view();
            const ReplicatedState& got = (*replica)->state();
            if (!testing::SameState(got, want) || got.adapter.Hash() != u->state_hash)
            {
                ADD_FAILURE() << options << ": replica differs at " << step;
                break;
            }
            hash = got.adapter.Hash();
            StatusOr<wire::Update> update = DecodeUpdateFrame(u->frame);
            EXPECT_TRUE(update.ok());
            if (update.ok() && update->compressor() == "spar-rb-v1")
                for (int64_t c : Coefficients(update->payload(), layout.size()))
                    *coefficients += c;
        }
    }
    else
    {
        ADD_FAILURE() << publisher.status().ToString() << " / " << replica.status().ToString();
    }
    at::set_num_threads(saved);
    return hash;
}

TEST(SparBasis, ReplicasBitIdenticalOnOneAndTwoThreads)
{
    int64_t c1 = 0, c2 = 0, fresh_c = 0;
    const uint64_t one = Lockstep("basis=replicated", 1, 12, &c1);
    const uint64_t two = Lockstep("basis=replicated", 2, 12, &c2);
    EXPECT_NE(one, 0u);
    EXPECT_EQ(one, two) << "thread count changed the run";
    EXPECT_EQ(c1, c2);
    EXPECT_GT(c1, 0) << "no direction was ever shipped in the basis";
    // Against spar without the basis (its payloads have no coefficient section to count).
    const uint64_t fresh = Lockstep("", 2, 12, &fresh_c);
    EXPECT_NE(fresh, 0u);
    EXPECT_NE(fresh, one) << "the basis had no effect";
}

/// Relative error ||G - G_hat|| / ||G|| of the learner's decoded update at step `steps` of a
/// slowly turning low-rank gradient, without error feedback, at `bytes` per payload.
double
ErrorAfter(const std::string& options, int64_t bytes, int steps, int64_t* payload_bytes)
{
    const AdapterLayout layout = Layout();
    SyncSpec spec = HiloSpec(options, Budget::Bytes(bytes));
    spec.error_feedback = ErrorFeedbackOptions{false, 1.0f};
    const OptimizerConfig opt = Adam();
    auto strategy = NewSyncStrategy(spec, layout, opt);
    EXPECT_TRUE(strategy.ok()) << strategy.status().ToString();
    if (!strategy.ok())
        return -1.0;
    LearnerState s;
    (*strategy)->InitLearner(testing::InitialState(layout, 3), &s);
    const std::vector<float> a = LowRank(layout, 2, 1);
    const std::vector<float> b = LowRank(layout, 2, 2);
    auto compressor = NewCompressor("spar", layout, spec.compressor_options).value();
    auto* aware = dynamic_cast<ReplayAwareCompressor*>(compressor.get());
    double err = -1.0;
    for (int t = 0; t < steps; ++t)
    {
        // The gradient turns slowly from a to b.
        const float w = static_cast<float>(t) / static_cast<float>(steps);
        std::vector<float> g(a.size());
        for (size_t k = 0; k < g.size(); ++k)
            g[k] = (1.0f - w) * a[k] + w * b[k];
        const OptimizerState before = s.train.optimizer;
        LearnerStepTimes times;
        StatusOr<Encoded> e = (*strategy)->LearnerStep(g, &s, &times);
        EXPECT_TRUE(e.ok()) << e.status().ToString();
        if (!e.ok())
            return -1.0;
        *payload_bytes = static_cast<int64_t>(e->payload.size());
        std::vector<float> decoded;
        aware->SetOptimizerState(&before, &opt);
        EXPECT_TRUE(compressor->Decode(e->payload, &decoded).ok());
        aware->SetOptimizerState(nullptr, nullptr);
        double num = 0.0, den = 0.0;
        for (size_t k = 0; k < g.size(); ++k)
        {
            const double diff = static_cast<double>(g[k]) - decoded[k];
            num += diff * diff;
            den += static_cast<double>(g[k]) * g[k];
        }
        err = std::sqrt(num / den);
    }
    return err;
}

TEST(SparBasis, ASlowlyTurningGradientCostsLessInTheBasis)
{
    // 900 bytes hold one fresh direction of each matrix pair at most (92 + 452 bytes a pair), a
    // rank-2 gradient of every matrix needs 2 (2 x 92 + 2 x 452) = 2,176; in the basis a
    // direction costs 9 or 49 bytes. (At 600 bytes, room for one wide triplet and little else,
    // the basis does not help: 0.71 against 0.72 after 20 steps.)
    const int64_t kBytes = 900;
    int64_t fresh_bytes = 0, basis_bytes = 0;
    const double fresh = ErrorAfter("", kBytes, 20, &fresh_bytes);
    const double basis = ErrorAfter("basis=replicated", kBytes, 20, &basis_bytes);
    EXPECT_LE(fresh_bytes, kBytes);
    EXPECT_LE(basis_bytes, kBytes);
    ASSERT_GT(fresh, 0.0);
    ASSERT_GE(basis, 0.0);
    EXPECT_LT(basis, 0.2 * fresh) << "fresh " << fresh << ", basis " << basis;
}

/// Bytes the coefficient entries of a spar-rb-v1 payload of Layout() take (bf16).
int64_t
CoefficientBytes(const std::string& payload)
{
    const AdapterLayout layout = Layout();
    const std::vector<int64_t> cs = Coefficients(payload, layout.size());
    int64_t bytes = 0;
    for (size_t i = 0; i < cs.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        bytes += cs[i] * (1 + 2 * std::min(s.rows, s.cols));
    }
    return bytes;
}

/// A learner state after `steps` hilo steps of a fixed rank-2 gradient, and that gradient.
struct Warmed
{
    OptimizerState state;
    std::vector<float> grad;
};
Warmed
Warm(int steps)
{
    const AdapterLayout layout = Layout();
    auto strategy = NewSyncStrategy(HiloSpec("", Budget::Fraction(0.5)), layout, Adam()).value();
    LearnerState s;
    strategy->InitLearner(testing::InitialState(layout, 3), &s);
    Warmed w;
    w.grad = LowRank(layout, 2, 1);
    for (int t = 0; t < steps; ++t)
    {
        LearnerStepTimes times;
        EXPECT_TRUE(strategy->LearnerStep(w.grad, &s, &times).ok());
    }
    w.state = s.train.optimizer;
    return w;
}

TEST(SparBasis, CoefficientsKeepWithinTheirShare)
{
    const AdapterLayout layout = Layout();
    const Warmed w = Warm(3);
    const OptimizerConfig opt = Adam();
    for (const char* share : {"0.1", "0.25", "0.5", "1"})
    {
        auto c = NewCompressor(
                     "spar", layout,
                     ParseCompressorOptions(std::string("basis=replicated;basis_share=") + share)
                         .value())
                     .value();
        auto* aware = dynamic_cast<ReplayAwareCompressor*>(c.get());
        ASSERT_NE(aware, nullptr);
        aware->SetOptimizerState(&w.state, &opt);
        StatusOr<Encoded> e = c->Encode(w.grad, 800);
        ASSERT_TRUE(e.ok()) << e.status().ToString();
        const int64_t net = 800 - (c->MinPayloadBytes());
        EXPECT_LE(CoefficientBytes(e->payload), std::stod(share) * net) << share;
        EXPECT_GT(CoefficientBytes(e->payload), 0) << share;
        std::vector<float> out;
        EXPECT_TRUE(c->Decode(e->payload, &out).ok());
    }
}

TEST(SparBasis, BadPayloadsAndMissingStateAreRefused)
{
    const AdapterLayout layout = Layout();
    const Warmed w = Warm(3);
    const OptimizerConfig opt = Adam();
    auto c =
        NewCompressor("spar", layout, ParseCompressorOptions("basis=replicated").value()).value();
    EXPECT_EQ(c->Name(), "spar-rb-v1");
    auto* aware = dynamic_cast<ReplayAwareCompressor*>(c.get());
    ASSERT_TRUE(aware->NeedsOptimizerState());
    ASSERT_TRUE(aware->DecodeNeedsOptimizerState());
    // Neither side works without the state.
    EXPECT_EQ(c->Encode(w.grad, 800).status().code(), StatusCode::kInvalidArgument);
    aware->SetOptimizerState(&w.state, &opt);
    StatusOr<Encoded> e = c->Encode(w.grad, 800);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    const std::vector<int64_t> cs = Coefficients(e->payload, layout.size());
    ASSERT_GT(cs[0], 0);
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    const std::vector<float> decoded = out;
    aware->SetOptimizerState(nullptr, nullptr);
    EXPECT_EQ(c->Decode(e->payload, &out).code(), StatusCode::kInvalidArgument);
    aware->SetOptimizerState(&w.state, &opt);
    // Matrix 0's first entry starts after u8 dtype, varint count, 4 + 4 one-byte varints.
    const size_t first = 1 + 1 + 2 * layout.size();
    const uint8_t j0 = static_cast<uint8_t>(e->payload[first]);
    auto corrupt = [&](const std::string& p) { return c->Decode(p, &out).code(); };
    std::string bad = e->payload;
    bad[first] = static_cast<char>(2); // past matrix 0's basis (rank-2 first moment)
    EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
    if (cs[0] >= 2)
    {
        bad = e->payload;
        bad[first + 1 + 8] = static_cast<char>(j0); // the second entry repeats the first
        EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
    }
    bad = e->payload;
    bad[1 + 1 + layout.size()] = static_cast<char>(3); // coefficient count past the basis,
    bad += std::string(1 + 2 * 4, '\0');               // with the bytes such an entry takes
    const Status past = c->Decode(bad, &out);
    EXPECT_EQ(past.code(), StatusCode::kCorruption);
    EXPECT_NE(past.message().find("exceeds its replicated basis (2 directions)"), std::string::npos)
        << past.message();
    EXPECT_EQ(corrupt(e->payload.substr(0, e->payload.size() - 1)), StatusCode::kCorruption);
    bad = e->payload;
    bad[first + 1] = static_cast<char>(0xc0); // bf16 NaN (0x7fc0) as the first coefficient
    bad[first + 2] = static_cast<char>(0x7f);
    EXPECT_EQ(corrupt(bad), StatusCode::kCorruption);
    // The untouched payload still decodes to the same bits.
    std::vector<float> again;
    ASSERT_TRUE(c->Decode(e->payload, &again).ok());
    EXPECT_TRUE(SameBytes(again, decoded));
}

TEST(SparBasis, OptionsAreChecked)
{
    const AdapterLayout layout = Layout();
    auto status = [&](const char* kind, const std::string& text)
    { return NewCompressor(kind, layout, ParseCompressorOptions(text).value()).status(); };
    EXPECT_TRUE(status("spar", "basis=replicated;basis_width=2;basis_share=0.3").ok());
    for (const char* bad : {"basis_width=2", "basis_share=0.3", "basis=replicated;basis_share=1.5",
                            "basis=replicated;basis_share=0", "basis=replicated;basis_width=-1",
                            "basis=replicated;min_rank=1", "basis=replicated;allocation=uniform"})
        EXPECT_EQ(status("spar", bad).code(), StatusCode::kInvalidArgument) << bad;
    const Status sparq = status("sparq", "basis=replicated");
    EXPECT_EQ(sparq.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(sparq.message().find("spar only"), std::string::npos) << sparq.message();
    // In the parameters (and so the config hash), with its two settings.
    auto c = NewCompressor("spar", layout, ParseCompressorOptions("basis=replicated").value());
    ASSERT_TRUE(c.ok());
    EXPECT_NE((*c)->Params().find("basis=replicated;basis_share=0.5;basis_width=0"),
              std::string::npos)
        << (*c)->Params();
    // Strategy hilo with adamw only: the basis is Adam's first moment, replayed.
    SyncSpec delta = HiloSpec("basis=replicated", Budget::Bytes(1000));
    delta.kind = SyncKind::kDelta;
    EXPECT_EQ(NewSyncStrategy(delta, layout, Adam()).status().code(), StatusCode::kInvalidArgument);
    OptimizerConfig sgd = Adam();
    sgd.kind = OptimizerKind::kSgdMomentum;
    const Status s =
        NewSyncStrategy(HiloSpec("basis=replicated", Budget::Bytes(1000)), layout, sgd).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("basis=replicated"), std::string::npos) << s.message();
}

} // namespace
} // namespace hilo

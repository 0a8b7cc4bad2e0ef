// Spar and sparq that know the optimizer they feed (hilo/compress/allocation-policy.h): the
// preconditioned allocation reaches a matrix the energy allocation starves, coverage=N holds over
// many updates, ef_max_ratio bounds the error-feedback backlog over 1,000 steps, the greedy fills
// the budget to within one smallest triplet, every new option keeps the replicas bit-identical to
// the learner on 1 and 2 threads, and the options are checked.
#include "hilo/compress/allocation-policy.h"
#include "hilo/compress/compressor-factory.h"
#include "hilo/compress/replay-aware.h"
#include "hilo/core/coding.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "hilo/sync/sync-strategy.h"
#include "tests/hilo/test-util.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace hilo
{
namespace
{

using testing::Adam;
using testing::HiloSpec;
using testing::SplitMix;

/// Four LoRA-shaped factors of rank 4; a triplet costs 4 + 2 (4 + 32) = 76 bytes in bf16.
AdapterLayout
FourFactors()
{
    return AdapterLayout::Create({{"l0.q.lora_A", 4, 32},
                                  {"l0.q.lora_B", 32, 4},
                                  {"l1.q.lora_A", 4, 32},
                                  {"l1.q.lora_B", 32, 4}})
        .value();
}

/// A gradient source whose matrix i is scale_i (u_i v_i^T + 0.3 noise): a fixed leading direction
/// per matrix (as real LoRA gradients have) with fresh noise every step.
class Gradients
{
  public:
    Gradients(const AdapterLayout& layout, std::vector<float> scales, uint64_t seed)
      : m_layout(layout)
      , m_scales(std::move(scales))
      , m_rng(seed)
    {
        for (size_t i = 0; i < layout.size(); ++i)
        {
            const MatrixSpec& s = layout.matrix(i);
            std::vector<float> u(static_cast<size_t>(s.rows)), v(static_cast<size_t>(s.cols));
            for (float& x : u)
                x = m_rng.Uniform();
            for (float& x : v)
                x = m_rng.Uniform();
            m_u.push_back(u);
            m_v.push_back(v);
        }
    }
    const std::vector<float>& Next()
    {
        m_g.assign(static_cast<size_t>(m_layout.numel()), 0.0f);
        for (size_t i = 0; i < m_layout.size(); ++i)
        {
            const MatrixSpec& s = m_layout.matrix(i);
            float* out = m_g.data() + m_layout.offset(i);
            for (int64_t r = 0; r < s.rows; ++r)
            {
                for (int64_t c = 0; c < s.cols; ++c)
                {
                    out[r * s.cols + c] = m_scales[i] * (m_u[i][static_cast<size_t>(r)] *
                                                             m_v[i][static_cast<size_t>(c)] +
                                                         0.3f * m_rng.Uniform());
                }
            }
        }
        return m_g;
    }

  private:
    AdapterLayout m_layout;
    std::vector<float> m_scales;
    SplitMix m_rng;
    std::vector<std::vector<float>> m_u, m_v;
    std::vector<float> m_g;
};

/// Runs `steps` hilo learner steps of `spec`; returns kept_per_matrix of every step.
std::vector<std::vector<int64_t>>
KeptPerStep(const SyncSpec& spec, const AdapterLayout& layout, Gradients* grads, int steps)
{
    auto strategy = NewSyncStrategy(spec, layout, Adam());
    EXPECT_TRUE(strategy.ok()) << strategy.status().ToString();
    if (!strategy.ok())
        return {};
    LearnerState s;
    (*strategy)->InitLearner(testing::InitialState(layout, 3), &s);
    std::vector<std::vector<int64_t>> kept;
    for (int t = 0; t < steps; ++t)
    {
        LearnerStepTimes times;
        StatusOr<Encoded> e = (*strategy)->LearnerStep(grads->Next(), &s, &times);
        EXPECT_TRUE(e.ok()) << e.status().ToString();
        if (!e.ok())
            return kept;
        kept.push_back(e->kept_per_matrix);
    }
    return kept;
}

/// Directions matrix i received over all steps.
int64_t
Total(const std::vector<std::vector<int64_t>>& kept, size_t i)
{
    int64_t n = 0;
    for (const auto& k : kept)
        n += k[i];
    return n;
}

/// The longest run of consecutive updates in which matrix i received nothing.
int64_t
LongestGap(const std::vector<std::vector<int64_t>>& kept, size_t i)
{
    int64_t gap = 0, run = 0;
    for (const auto& k : kept)
    {
        run = k[i] > 0 ? 0 : run + 1;
        gap = std::max(gap, run);
    }
    return gap;
}

TEST(SparOptimizer, PreconditionedReachesAMatrixEnergyStarves)
{
    const AdapterLayout layout = FourFactors();
    // Matrix 3's gradient is 1000x smaller but as concentrated as the others'.
    const std::vector<float> scales = {1.0f, 0.8f, 0.6f, 1e-3f};
    for (const char* kind : {"spar", "sparq"})
    {
        // Two triplets per update: header + 2 x (76 bytes in bf16, 26 in 4-bit codes).
        const Budget two_triplets =
            Budget::Bytes(std::string(kind) == "spar" ? 6 + 2 * 76 : 7 + 2 * 26);
        Gradients g_energy(layout, scales, 5), g_pre(layout, scales, 5);
        const auto energy =
            KeptPerStep(HiloSpec(kind, "allocation=energy", two_triplets), layout, &g_energy, 30);
        const auto pre = KeptPerStep(HiloSpec(kind, "allocation=preconditioned", two_triplets),
                                     layout, &g_pre, 30);
        ASSERT_EQ(energy.size(), 30u);
        ASSERT_EQ(pre.size(), 30u);
        EXPECT_EQ(Total(energy, 3), 0) << kind << ": the layout no longer starves matrix 3";
        for (size_t i = 0; i < layout.size(); ++i)
        {
            EXPECT_GT(Total(pre, i), 0) << kind << ": matrix " << i << " never reached";
        }
    }
}

TEST(SparOptimizer, CoverageHoldsOverManyUpdates)
{
    const AdapterLayout layout = AdapterLayout::Create({{"a0", 4, 32},
                                                        {"b0", 32, 4},
                                                        {"a1", 4, 32},
                                                        {"b1", 32, 4},
                                                        {"a2", 4, 64},
                                                        {"b2", 64, 4}})
                                     .value();
    const std::vector<float> scales = {1.0f, 0.9f, 1e-2f, 1e-3f, 2e-3f, 1e-4f};
    for (const char* kind : {"spar", "sparq"})
    {
        // Room for one triplet of every matrix (coverage=1 needs it) and little more: header +
        // 4 x 76 + 2 x 140 bytes in bf16, 4 x 26 + 2 x 42 in 4-bit codes.
        const Budget budget =
            Budget::Bytes(std::string(kind) == "spar" ? 8 + 4 * 76 + 2 * 140 : 9 + 4 * 26 + 2 * 42);
        for (int64_t n : {1, 3, 4})
        {
            Gradients g(layout, scales, 7);
            const auto kept = KeptPerStep(HiloSpec(kind, "coverage=" + std::to_string(n), budget),
                                          layout, &g, 300);
            ASSERT_EQ(kept.size(), 300u);
            for (size_t i = 0; i < layout.size(); ++i)
            {
                EXPECT_LE(LongestGap(kept, i), n - 1)
                    << kind << " coverage=" << n << ": matrix " << i;
            }
        }
        // Not vacuous: without coverage some matrix waits longer than 4 updates.
        Gradients g(layout, scales, 7);
        const auto kept = KeptPerStep(HiloSpec(kind, "", budget), layout, &g, 300);
        int64_t worst = 0;
        for (size_t i = 0; i < layout.size(); ++i)
            worst = std::max(worst, LongestGap(kept, i));
        EXPECT_GT(worst, 3) << kind;
    }
}

/// The error-feedback residual inside a strategy's learner-local state (strategy-util.h's layout).
std::vector<float>
Residual(const SyncStrategy& strategy)
{
    const std::string state = strategy.SaveLearnerLocal();
    ByteReader r(state);
    uint64_t n = 0;
    EXPECT_TRUE(r.GetU64(&n));
    std::vector<float> e(static_cast<size_t>(n));
    for (float& x : e)
        EXPECT_TRUE(r.GetF32(&x));
    return e;
}

double
Norm(const std::vector<float>& v)
{
    double s = 0.0;
    for (float x : v)
        s += static_cast<double>(x) * x;
    return std::sqrt(s);
}

/// The largest ||e|| / ||G|| over `steps` hilo steps of spar on a tiny layout at its smallest
/// budget (one triplet of eight per step), gradients fresh and full rank every step.
double
WorstBacklog(const std::string& options, int steps)
{
    const AdapterLayout layout = testing::SmallLayout(); // 4 x 16 and 16 x 4
    auto c = NewCompressor("spar", layout, ParseCompressorOptions(options).value());
    EXPECT_TRUE(c.ok());
    const SyncSpec spec = HiloSpec("spar", options, Budget::Bytes((*c)->MinPayloadBytes() + 44));
    auto strategy = NewSyncStrategy(spec, layout, Adam());
    EXPECT_TRUE(strategy.ok()) << strategy.status().ToString();
    if (!strategy.ok())
        return 0.0;
    LearnerState s;
    (*strategy)->InitLearner(testing::InitialState(layout, 3), &s);
    SplitMix rng(17);
    std::vector<float> grad;
    double worst = 0.0;
    for (int t = 0; t < steps; ++t)
    {
        testing::FillGradient(layout, &rng, &grad);
        LearnerStepTimes times;
        EXPECT_TRUE((*strategy)->LearnerStep(grad, &s, &times).ok());
        worst = std::max(worst, Norm(Residual(**strategy)) / Norm(grad));
    }
    return worst;
}

TEST(SparOptimizer, BacklogBoundHoldsOverAThousandSteps)
{
    // Unbounded, the backlog of a compressor shipping one direction in eight outgrows 2x the
    // gradient; bounded, it stays at or below the ratio at every one of 1,000 steps.
    EXPECT_GT(WorstBacklog("", 1000), 1.5);
    for (double ratio : {0.5, 1.0})
    {
        std::string opt = "ef_max_ratio=" + std::to_string(ratio);
        EXPECT_LE(WorstBacklog(opt, 1000), ratio * (1.0 + 1e-6)) << ratio;
    }
}

TEST(SparOptimizer, BudgetFilledToWithinOneSmallestTriplet)
{
    // SparAllocate on random spectra: whatever is left is less than the cost of every matrix that
    // still has a positive-gain candidate, with and without weights and overdue matrices.
    SplitMix rng(23);
    for (int trial = 0; trial < 400; ++trial)
    {
        const size_t n = 1 + rng.Next() % 8;
        std::vector<SparCandidates> m(n);
        for (SparCandidates& c : m)
        {
            c.cost = 20 + static_cast<int64_t>(rng.Next() % 300);
            const size_t k = rng.Next() % 6;
            double g = std::fabs(rng.Uniform()) * 10.0;
            for (size_t j = 0; j < k; ++j)
            {
                c.gains.push_back(g);
                g *= 0.2 + 0.8 * std::fabs(rng.Uniform());
            }
            if (trial % 2 == 1)
            {
                c.weight = 0.01 + std::fabs(rng.Uniform()) * 100.0;
                c.overdue = static_cast<int64_t>(rng.Next() % 3);
            }
        }
        const int64_t budget = static_cast<int64_t>(rng.Next() % 2000);
        StatusOr<std::vector<int64_t>> ks = SparAllocate(m, budget, 0, SparAllocation::kGreedy);
        ASSERT_TRUE(ks.ok());
        int64_t used = 0;
        for (size_t i = 0; i < n; ++i)
            used += (*ks)[i] * m[i].cost;
        ASSERT_LE(used, budget);
        for (size_t i = 0; i < n; ++i)
        {
            const size_t k = static_cast<size_t>((*ks)[i]);
            if (k < m[i].gains.size() && m[i].gains[k] > 0.0)
            {
                EXPECT_LT(budget - used, m[i].cost) << "trial " << trial << " matrix " << i;
            }
        }
    }
    // And end to end: spar's payload leaves less than its smallest triplet of the budget.
    const AdapterLayout layout = FourFactors();
    for (const char* options : {"", "allocation=preconditioned", "coverage=2"})
    {
        Gradients g(layout, {1.0f, 0.5f, 0.25f, 0.1f}, 9);
        auto strategy =
            NewSyncStrategy(HiloSpec("spar", options, Budget::Bytes(700)), layout, Adam());
        ASSERT_TRUE(strategy.ok()) << strategy.status().ToString();
        LearnerState s;
        (*strategy)->InitLearner(testing::InitialState(layout, 3), &s);
        for (int t = 0; t < 10; ++t)
        {
            LearnerStepTimes times;
            StatusOr<Encoded> e = (*strategy)->LearnerStep(g.Next(), &s, &times);
            ASSERT_TRUE(e.ok());
            EXPECT_LE(e->payload.size(), 700u);
            EXPECT_LT(700 - static_cast<int64_t>(e->payload.size()), 76) << options << " " << t;
        }
    }
}

/// Publisher -> Replica for `steps` versions; every version's replica state must equal the
/// learner's bit for bit. Returns the final state hash (0 on failure).
uint64_t
Lockstep(const char* kind, const std::string& options, int threads, int steps,
         const OptimizerConfig& opt = Adam())
{
    const int saved = at::get_num_threads();
    at::set_num_threads(threads);
    // A layout whose loops split across two threads (132k parameters), with sketched matrices.
    const AdapterLayout layout = AdapterLayout::Create({{"l0.q.lora_A", 64, 1024},
                                                        {"l0.q.lora_B", 1024, 64},
                                                        {"l0.k.lora_A", 8, 96},
                                                        {"l0.k.lora_B", 32, 8},
                                                        {"l0.o.lora_A", 3, 5}})
                                     .value();
    const SyncSpec spec = HiloSpec(kind, options, Budget::Fraction(0.03));
    const AdapterState init = testing::InitialState(layout, 11);
    auto publisher = Publisher::Create(spec, layout, opt, init);
    auto replica = Replica::Create(spec, layout, opt, init);
    uint64_t hash = 0;
    if (publisher.ok() && replica.ok())
    {
        SplitMix rng(99);
        std::vector<float> grad;
        for (int step = 1; step <= steps; ++step)
        {
            testing::FillGradient(layout, &rng, &grad);
            StatusOr<PublishedUpdate> u = (*publisher)->Step(grad);
            if (!u.ok() || !(*replica)->Apply(u->frame).ok())
            {
                ADD_FAILURE() << kind << " " << options << ": step " << step;
                break;
            }
            const ReplicatedState& want = (*publisher)->replica_view();
            const ReplicatedState& got = (*replica)->state();
            if (!testing::SameState(got, want) || got.adapter.Hash() != u->state_hash)
            {
                ADD_FAILURE() << kind << " " << options << ": replica differs at " << step;
                break;
            }
            hash = got.adapter.Hash();
        }
    }
    else
    {
        ADD_FAILURE() << publisher.status().ToString() << " / " << replica.status().ToString();
    }
    at::set_num_threads(saved);
    return hash;
}

TEST(SparOptimizer, EveryNewOptionBitIdenticalOnOneAndTwoThreads)
{
    const char* kOptions[] = {
        "allocation=preconditioned",
        "coverage=3",
        "ef_max_ratio=1",
        "allocation=preconditioned;coverage=2;ef_max_ratio=1.5;sketch=8;warm=true",
    };
    for (const char* kind : {"spar", "sparq"})
    {
        const uint64_t plain = Lockstep(kind, "sketch=0", 2, 8);
        for (const char* options : kOptions)
        {
            const uint64_t one = Lockstep(kind, options, 1, 8);
            const uint64_t two = Lockstep(kind, options, 2, 8);
            EXPECT_NE(one, 0u);
            EXPECT_EQ(one, two) << kind << " " << options << ": thread count changed the run";
            EXPECT_NE(one, plain) << kind << " " << options << ": option had no effect";
        }
    }
}

// The other backlog bound: AdamW's second moment frozen after step 4 (1-bit Adam). Both sides
// replay it: every version's replica state, v included, equals the learner's on 1 and 2 threads.
TEST(SparOptimizer, FrozenSecondMomentBitIdenticalOnOneAndTwoThreads)
{
    OptimizerConfig frozen = Adam();
    frozen.v_freeze_step = 4;
    for (const char* kind : {"spar", "sparq"})
    {
        const uint64_t plain = Lockstep(kind, "", 2, 10);
        const uint64_t one = Lockstep(kind, "", 1, 10, frozen);
        const uint64_t two = Lockstep(kind, "", 2, 10, frozen);
        EXPECT_NE(one, 0u);
        EXPECT_EQ(one, two) << kind << ": thread count changed the run";
        EXPECT_NE(one, plain) << kind << ": the frozen second moment had no effect";
    }
}

TEST(SparOptimizer, CoverageCountersSurviveACheckpoint)
{
    const AdapterLayout layout = FourFactors();
    for (const char* kind : {"spar", "sparq"})
    {
        auto make = [&]
        {
            return NewCompressor(kind, layout,
                                 ParseCompressorOptions("coverage=2;sketch=0").value())
                .value();
        };
        auto a = make();
        Gradients g(layout, {1.0f, 1e-3f, 1e-3f, 1e-3f}, 4);
        const int64_t budget = a->MinPayloadBytes() + 76 + 10;
        for (int t = 0; t < 3; ++t)
            ASSERT_TRUE(a->Encode(g.Next(), budget).ok());
        auto b = make();
        ASSERT_TRUE(b->RestoreLocalState(a->SaveLocalState()).ok());
        for (int t = 0; t < 4; ++t)
        {
            const std::vector<float> x = g.Next();
            EXPECT_EQ(a->Encode(x, budget)->payload, b->Encode(x, budget)->payload)
                << kind << " " << t;
        }
        // An encoder without the counters decides differently: they matter.
        auto fresh = make();
        Gradients g2(layout, {1.0f, 1e-3f, 1e-3f, 1e-3f}, 4);
        for (int t = 0; t < 3; ++t)
            g2.Next();
        auto restored = make();
        ASSERT_TRUE(restored->RestoreLocalState(a->SaveLocalState()).ok());
        std::string with, without;
        for (int t = 0; t < 4; ++t)
        {
            const std::vector<float> x = g2.Next();
            with += restored->Encode(x, budget)->payload;
            without += fresh->Encode(x, budget)->payload;
        }
        EXPECT_NE(with, without) << kind;
        EXPECT_FALSE(b->RestoreLocalState("\x07").ok()) << kind;
    }
}

TEST(SparOptimizer, OptionsAreChecked)
{
    const AdapterLayout layout = FourFactors();
    for (const char* kind : {"spar", "sparq"})
    {
        auto status = [&](const std::string& text)
        { return NewCompressor(kind, layout, ParseCompressorOptions(text).value()).status(); };
        EXPECT_TRUE(status("basis=fresh").ok());
        // basis=replicated is spar's (tests/hilo/spar-basis-test.cc); sparq refuses it.
        EXPECT_EQ(status("basis=replicated").ok(), std::string(kind) == "spar") << kind;
        for (const char* bad : {"allocation=adam", "coverage=-1", "coverage=x", "ef_max_ratio=-1",
                                "ef_max_ratio=nan", "basis=stale"})
        {
            EXPECT_EQ(status(bad).code(), StatusCode::kInvalidArgument) << kind << " " << bad;
        }
        // Named in the parameters (and so in the config hash) when on.
        auto c = NewCompressor(
                     kind, layout,
                     ParseCompressorOptions("allocation=preconditioned;coverage=5;ef_max_ratio=1.5")
                         .value())
                     .value();
        EXPECT_NE(c->Params().find("allocation=preconditioned"), std::string::npos);
        EXPECT_NE(c->Params().find("coverage=5"), std::string::npos);
        EXPECT_NE(c->Params().find("ef_max_ratio=1.5"), std::string::npos);
        // Preconditioned needs the replayed second moment: a bare Encode has none.
        std::vector<float> x(static_cast<size_t>(layout.numel()), 0.5f);
        EXPECT_EQ(c->Encode(x, 1000).status().code(), StatusCode::kInvalidArgument);
        // ... and strategy hilo; ef_max_ratio needs error feedback.
        SyncSpec delta = HiloSpec(kind, "allocation=preconditioned", Budget::Bytes(1000));
        delta.kind = SyncKind::kDelta;
        EXPECT_EQ(NewSyncStrategy(delta, layout, Adam()).status().code(),
                  StatusCode::kInvalidArgument);
        EXPECT_EQ(NewSyncStrategy(HiloSpec(kind, "ef_max_ratio=1", Budget::Bytes(1000),
                                           /*error_feedback=*/false),
                                  layout, Adam())
                      .status()
                      .code(),
                  StatusCode::kInvalidArgument);
        OptimizerConfig sgd = Adam();
        sgd.kind = OptimizerKind::kSgdMomentum;
        EXPECT_EQ(NewSyncStrategy(HiloSpec(kind, "allocation=preconditioned", Budget::Bytes(1000)),
                                  layout, sgd)
                      .status()
                      .code(),
                  StatusCode::kInvalidArgument);
    }
    // spar's energy allocation is named as such; greedy is its older name.
    auto g = NewCompressor("spar", layout, ParseCompressorOptions("allocation=greedy").value());
    ASSERT_TRUE(g.ok());
    EXPECT_NE((*g)->Params().find("allocation=energy"), std::string::npos);
}

TEST(SparOptimizer, PreconditionedWeightsFollowAdamsDenominator)
{
    // One coordinate per matrix: w = 1 / D^2 with D = sqrt(v_hat) + eps exactly.
    const AdapterLayout layout = AdapterLayout::Create({{"a", 1, 1}, {"b", 1, 1}}).value();
    OptimizerConfig opt = Adam();
    OptimizerState st;
    st.v = {0.0f, 4.0f};
    st.beta2_prod = 0.999f; // one step taken
    const std::vector<float> x = {2.0f, 2.0f};
    const std::vector<double> w = PreconditionedWeights(layout, x, st, opt);
    const double beta2 = opt.beta2;
    const double correction = 1.0 - static_cast<double>(st.beta2_prod) * beta2;
    for (size_t i = 0; i < 2; ++i)
    {
        const double vhat = (beta2 * st.v[i] + (1.0 - beta2) * 4.0) / correction;
        const double d = std::sqrt(vhat) + 1e-8;
        EXPECT_NEAR(w[i], 1.0 / (d * d), 1e-9 / (d * d)) << i;
    }
    // The never-updated matrix weighs more: Adam's step there is the larger one.
    EXPECT_GT(w[0], 10.0 * w[1]);
}

} // namespace
} // namespace hilo

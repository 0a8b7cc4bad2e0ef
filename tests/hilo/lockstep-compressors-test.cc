// HiLo through Publisher -> Replica in lockstep with every compressor, with and without error
// feedback (where it converges): 60 versions each, and at every version the replica's adapter and
// optimizer state are bit-identical to the learner's (hash and bytes). Two intra-op threads, on a
// layout whose loops split across them.
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "tests/hilo/test-util.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace hilo
{
namespace
{

struct Case
{
    const char* compressor;
    const char* options;
    double budget_fraction; // of the adapter's bytes; 0: unlimited (quant's fixed size)
};

const Case kCases[] = {
    {"spar", "dtype=bf16", 0.05},
    {"spar", "dtype=int8", 0.02},
    {"spar", "allocation=uniform;dtype=fp16;min_rank=1", 0.05},
    {"powersgd", "dtype=bf16", 0.05},
    {"powersgd", "dtype=int8", 0.05},
    {"topk", "dtype=bf16", 0.02},
    {"topk", "dtype=fp32;scope=per_matrix", 0.05},
    {"randk", "dtype=bf16", 0.05},
    {"randk", "dtype=fp16;unbiased=true", 0.05},
    {"quant", "levels=1;scheme=qsgd", 0.0},
    {"quant", "block=256;scheme=int8", 0.0},
};

using Param = std::tuple<Case, bool>; // compressor, error feedback

std::string
ParamName(const ::testing::TestParamInfo<Param>& info)
{
    const Case& c = std::get<0>(info.param);
    std::string s =
        std::string(c.compressor) + "_" + c.options + (std::get<1>(info.param) ? "_ef" : "_noef");
    for (char& ch : s)
    {
        if (!std::isalnum(static_cast<unsigned char>(ch)))
            ch = '_';
    }
    return s;
}

class LockstepCompressors : public ::testing::TestWithParam<Param>
{
  protected:
    void SetUp() override
    {
        m_threads = at::get_num_threads();
        at::set_num_threads(2);
    }
    void TearDown() override { at::set_num_threads(m_threads); }

  private:
    int m_threads{1};
};

/// Runs `steps` lockstep versions; returns the final state hash (0 after a failure).
uint64_t
RunLockstep(const Case& c, bool error_feedback, int steps)
{
    // LoRA-like shapes (64 x 1024 and 1024 x 64) plus small awkward ones: 132k parameters, above
    // the grain of the replay and decode loops, so two threads split them.
    const AdapterLayout layout = AdapterLayout::Create({{"l0.q.lora_A", 64, 1024},
                                                        {"l0.q.lora_B", 1024, 64},
                                                        {"l0.k.lora_A", 8, 96},
                                                        {"l0.k.lora_B", 32, 8},
                                                        {"l0.o.lora_A", 3, 5}})
                                     .value();
    OptimizerConfig opt;
    opt.lr.base_lr = 1e-3f;
    opt.weight_decay = 0.01f;
    SyncSpec spec;
    spec.kind = SyncKind::kHilo;
    spec.compressor = c.compressor;
    spec.compressor_options = ParseCompressorOptions(c.options).value();
    spec.budget = c.budget_fraction > 0 ? Budget::Fraction(c.budget_fraction) : Budget::Unlimited();
    spec.error_feedback = ErrorFeedbackOptions{error_feedback, 1.0f};
    const AdapterState init = testing::InitialState(layout, 11);

    StatusOr<std::unique_ptr<Publisher>> publisher = Publisher::Create(spec, layout, opt, init);
    StatusOr<std::unique_ptr<Replica>> replica = Replica::Create(spec, layout, opt, init);
    if (!publisher.ok() || !replica.ok())
    {
        ADD_FAILURE() << publisher.status().ToString() << " / " << replica.status().ToString();
        return 0;
    }
    testing::SplitMix rng(99);
    std::vector<float> grad;
    const int64_t budget = spec.budget.ResolveBytes(layout.adapter_bytes());
    for (int step = 1; step <= steps; ++step)
    {
        testing::FillGradient(layout, &rng, &grad);
        StatusOr<PublishedUpdate> u = (*publisher)->Step(grad);
        if (!u.ok())
        {
            ADD_FAILURE() << "step " << step << ": " << u.status().ToString();
            return 0;
        }
        EXPECT_LE(u->payload_bytes, budget);
        Status s = (*replica)->Apply(u->frame);
        if (!s.ok())
        {
            ADD_FAILURE() << "step " << step << ": " << s.ToString();
            return 0;
        }
        const ReplicatedState& want = (*publisher)->replica_view();
        const ReplicatedState& got = (*replica)->state();
        if (got.adapter.version != static_cast<uint64_t>(step) ||
            got.adapter.Hash() != want.adapter.Hash() || got.adapter.Hash() != u->state_hash ||
            got.optimizer.Hash() != want.optimizer.Hash() || !testing::SameState(got, want))
        {
            ADD_FAILURE() << "replica differs from the learner at version " << step;
            return 0;
        }
    }
    // Not vacuous: the learner trained on what it sent, and the parameters moved.
    EXPECT_NE((*publisher)->train_state().adapter.Hash(), init.Hash());
    EXPECT_EQ((*replica)->stats().applied, static_cast<uint64_t>(steps));
    return (*replica)->state().adapter.Hash();
}

TEST_P(LockstepCompressors, SixtyVersionsBitIdentical)
{
    const auto& [c, ef] = GetParam();
    EXPECT_NE(RunLockstep(c, ef, 60), 0u);
}

/// Every case with error feedback off and on, except unbiased randk with error feedback: it
/// scales the kept entries by n/k, so the residual of a kept entry is (1 - n/k) times its input
/// and grows geometrically (error feedback needs a contractive compressor).
std::vector<Param>
Params()
{
    std::vector<Param> out;
    for (const Case& c : kCases)
    {
        out.emplace_back(c, false);
        if (std::string(c.options).find("unbiased=true") == std::string::npos)
            out.emplace_back(c, true);
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(EveryCompressor, LockstepCompressors, ::testing::ValuesIn(Params()),
                         ParamName);

TEST(LockstepCompressorsEf, ErrorFeedbackChangesTheTrajectory)
{
    // Guards against an error-feedback switch that is silently ignored on this path.
    const int threads = at::get_num_threads();
    at::set_num_threads(2);
    for (const Case& c : {kCases[0], kCases[3], kCases[5]})
    {
        EXPECT_NE(RunLockstep(c, true, 5), RunLockstep(c, false, 5)) << c.compressor;
    }
    at::set_num_threads(threads);
}

} // namespace
} // namespace hilo

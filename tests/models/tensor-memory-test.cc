// KeepFreedMemoryForReuse: a workload's rollouts and gradient are bit for bit the same before and
// after the allocator is set (only where temporaries live changes, never what is computed), and a
// value glibc cannot take is refused naming the option. The first test must see the allocator
// untouched, so it comes first (CTest also runs every test in its own process).
#include "models/tensor-memory.h"
#include "models/workload.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>

namespace models
{
namespace
{

struct Outputs
{
    std::vector<std::string> batches;
    std::vector<float> grad;
};

/// Two workers' rollouts at step 3 and the gradient of their batches, in passes of 8 sequences
/// (the batches are freshly allocated and freed pass after pass).
Outputs
RunOnce(const std::string& kind)
{
    WorkloadConfig c;
    c.kind = kind;
    c.seed = 5;
    c.prompts_per_worker = 3;
    c.eval_prompts = 8;
    c.micro_batch_sequences = 8;
    auto made = Workload::Create(c);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    const std::unique_ptr<Workload> wl = std::move(made).value();
    const std::vector<float> theta = wl->InitialAdapter().theta;
    Outputs o;
    o.batches = wl->RolloutMany(theta, 3, {0, 1}, nullptr).value();
    o.grad = wl->Gradient(theta, o.batches, nullptr).value();
    return o;
}

TEST(TensorMemoryTest, WorkloadOutputsAreBitIdenticalAfterTheAllocatorIsSet)
{
    for (const char* kind : {"distill", "grpo"})
    {
        const Outputs before = RunOnce(kind);
        const hilo::Status s = KeepFreedMemoryForReuse();
        ASSERT_TRUE(s.ok()) << s.ToString();
        const Outputs after = RunOnce(kind);
        EXPECT_EQ(before.batches, after.batches) << kind;
        ASSERT_EQ(before.grad.size(), after.grad.size()) << kind;
        EXPECT_EQ(0, std::memcmp(before.grad.data(), after.grad.data(),
                                 before.grad.size() * sizeof(float)))
            << kind;
    }
}

TEST(TensorMemoryTest, RefusesWhatGlibcCannotTakeNamingTheOption)
{
    TensorMemoryOptions o;
    o.trim_threshold_bytes = size_t(INT_MAX) + 1;
    const hilo::Status s = KeepFreedMemoryForReuse(o);
    EXPECT_EQ(s.code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("M_TRIM_THRESHOLD"), std::string::npos) << s.message();
}

} // namespace
} // namespace models

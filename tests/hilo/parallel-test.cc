// The intra-op thread pool is real: with two threads a loop above the grain runs its chunks on two
// OS threads (OpenMP linked and ATen's OpenMP backend in use), and ParallelTally sees exactly the
// threads that ran chunks.
#include "hilo/core/parallel.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <mutex>
#include <set>
#include <vector>

namespace hilo
{
namespace
{

class ParallelTest : public ::testing::Test
{
  protected:
    void SetUp() override { m_saved = at::get_num_threads(); }
    void TearDown() override { at::set_num_threads(m_saved); }

  private:
    int m_saved{1};
};

TEST_F(ParallelTest, TwoThreadsRunChunksOnTwoOsThreads)
{
    at::set_num_threads(2);
    ASSERT_EQ(at::get_num_threads(), 2);
    EXPECT_NE(at::get_parallel_info().find("OpenMP"), std::string::npos) << at::get_parallel_info();
    std::mutex mu;
    std::set<int> omp_ids;
    std::set<std::thread::id> os_ids;
    std::vector<int> owner(1 << 16, -1);
    ParallelTally tally;
    ParallelFor(0, static_cast<int64_t>(owner.size()), 1 << 10,
                [&](int64_t b, int64_t e)
                {
                    {
                        std::lock_guard<std::mutex> lock(mu);
                        omp_ids.insert(omp_get_thread_num());
                        os_ids.insert(std::this_thread::get_id());
                    }
                    for (int64_t i = b; i < e; ++i)
                        owner[static_cast<size_t>(i)] = at::get_thread_num();
                });
    EXPECT_EQ(omp_ids, (std::set<int>{0, 1}));
    EXPECT_EQ(os_ids.size(), 2u);
    EXPECT_EQ(tally.threads(), 2);
    EXPECT_EQ(tally.chunks(), 2);
    // Two contiguous halves, in thread order.
    EXPECT_EQ(owner.front(), 0);
    EXPECT_EQ(owner.back(), 1);
}

TEST_F(ParallelTest, BelowTheGrainOrOnOneThreadNothingSplits)
{
    at::set_num_threads(2);
    {
        ParallelTally tally;
        ParallelFor(0, 1000, 1000, [](int64_t, int64_t) {});
        EXPECT_EQ(tally.threads(), 1);
        EXPECT_EQ(tally.chunks(), 1);
    }
    at::set_num_threads(1);
    {
        ParallelTally tally;
        ParallelFor(0, 1 << 20, 1, [](int64_t, int64_t) {});
        EXPECT_EQ(tally.threads(), 1);
    }
}

TEST_F(ParallelTest, TallyRecordsOnlyWhileInScopeAndNests)
{
    at::set_num_threads(2);
    ParallelTally outer;
    {
        ParallelTally inner;
        ParallelFor(0, 1 << 16, 1 << 10, [](int64_t, int64_t) {});
        EXPECT_EQ(inner.chunks(), 2);
    }
    EXPECT_EQ(outer.chunks(), 0);
    ParallelFor(0, 10, 100, [](int64_t, int64_t) {});
    EXPECT_EQ(outer.chunks(), 1);
    EXPECT_EQ(ParallelTally::Current(), &outer);
}

} // namespace
} // namespace hilo

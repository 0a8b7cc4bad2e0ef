// The emulator's lag spikes (lag-monitor.h): the line hilo-netem logs for them names each one in
// run time from the epoch with its lag, keeps the largest when there are too many, and says how
// many there were.
#include "sim/drivers/emulation/lag-monitor.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

TEST(LagSpikes, EachInRunTimeFromTheEpochWithItsLag)
{
    const int64_t epoch = 5'000'000'000;
    const std::vector<LagSpike> spikes = {{epoch + 1'253'000'000, 0.0137},
                                          {epoch + 7'010'000'000, 0.0045}};
    EXPECT_EQ(FormatLagSpikes(spikes, epoch),
              "lag spikes (at least 4 ms): 2; run time s: lag ms 1.253:13.7 7.010:4.5");
    EXPECT_EQ(FormatLagSpikes({}, epoch), "lag spikes (at least 4 ms): 0; run time s: lag ms");
}

TEST(LagSpikes, TooManyKeepTheLargestInTimeOrder)
{
    const std::vector<LagSpike> spikes = {{1'000'000'000, 0.005},
                                          {2'000'000'000, 0.030},
                                          {3'000'000'000, 0.006},
                                          {4'000'000'000, 0.020}};
    // No epoch: times from the first spike kept.
    EXPECT_EQ(FormatLagSpikes(spikes, 0, 2),
              "lag spikes (at least 4 ms): 4 (the 2 largest below); s from the first: lag ms "
              "0.000:30.0 2.000:20.0");
}

} // namespace
} // namespace hilosim

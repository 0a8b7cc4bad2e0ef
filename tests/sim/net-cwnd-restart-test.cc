// CwndAfterIdle and CwndLimit (sim/net/cwnd-restart.h): Linux's tcp_cwnd_restart and
// tcp_is_cwnd_limited, the rule both network models share.
#include "sim/net/cwnd-restart.h"

#include <gtest/gtest.h>

#include <limits>

namespace hilosim
{
namespace
{

constexpr double kSegment = 1000;

CwndRestartInput
Idle(double cwndSegments, double ssthreshSegments, double idleS)
{
    CwndRestartInput in;
    in.cwnd_bytes = cwndSegments * kSegment;
    in.ssthresh_bytes = ssthreshSegments * kSegment;
    in.initial_cwnd_bytes = 10 * kSegment;
    in.segment_bytes = kSegment;
    in.idle_s = idleS;
    in.rto_s = 0.3;
    return in;
}

TEST(CwndRestart, OneRtoAndABitHalvesOnceAndKeepsThreeQuartersAsSsthresh)
{
    const CwndRestartResult out = CwndAfterIdle(Idle(100, 40, 0.35));
    EXPECT_TRUE(out.restarted);
    EXPECT_EQ(out.cwnd_bytes, 50 * kSegment);
    EXPECT_EQ(out.ssthresh_bytes, 75 * kSegment);
}

TEST(CwndRestart, HalvingsCountWholeRtosOfIdleBeyondTheFirstInWholeSegments)
{
    // 1.0 s idle, 0.3 s RTO: 0.7, 0.4, 0.1 > 0 -> three halvings of 101 segments: 50, 25, 12.
    EXPECT_EQ(CwndAfterIdle(Idle(101, 40, 1.0)).cwnd_bytes, 12 * kSegment);
    // Exactly one RTO is not more than one RTO: nothing happens.
    const CwndRestartResult none = CwndAfterIdle(Idle(100, 40, 0.3));
    EXPECT_FALSE(none.restarted);
    EXPECT_EQ(none.cwnd_bytes, 100 * kSegment);
    EXPECT_EQ(none.ssthresh_bytes, 40 * kSegment);
    // A long idle period stops at the initial window; a window already below it stays.
    EXPECT_EQ(CwndAfterIdle(Idle(800, 40, 60)).cwnd_bytes, 10 * kSegment);
    EXPECT_EQ(CwndAfterIdle(Idle(6, 40, 60)).cwnd_bytes, 6 * kSegment);
}

TEST(CwndRestart, SsthreshIsLeftAloneOnlyWhileTheWindowIsBeingReduced)
{
    CwndRestartInput recovery = Idle(100, 40, 0.35);
    recovery.in_cwnd_reduction = true; // CWR or Recovery
    EXPECT_EQ(CwndAfterIdle(recovery).ssthresh_bytes, 40 * kSegment);
    EXPECT_EQ(CwndAfterIdle(recovery).cwnd_bytes, 50 * kSegment);
    // Before any loss (infinite ssthresh) it stays infinite.
    const double inf = std::numeric_limits<double>::infinity();
    CwndRestartInput fresh = Idle(100, 0, 0.35);
    fresh.ssthresh_bytes = inf;
    EXPECT_EQ(CwndAfterIdle(fresh).ssthresh_bytes, inf);
}

TEST(CwndRestart, AlgorithmsThatSetCwndThemselvesAndUnknownRtosAreLeftAlone)
{
    CwndRestartInput bbr = Idle(100, 40, 5);
    bbr.sets_cwnd_itself = true;
    EXPECT_FALSE(CwndAfterIdle(bbr).restarted);
    EXPECT_EQ(CwndAfterIdle(bbr).cwnd_bytes, 100 * kSegment);
    CwndRestartInput noRtt = Idle(100, 40, 5);
    noRtt.rto_s = 0;
    EXPECT_FALSE(CwndAfterIdle(noRtt).restarted);
}

TEST(CwndRestart, GrowthOnlyWhileCwndIsTheLimit)
{
    // A flight that filled cwnd: always.
    EXPECT_TRUE(CwndLimit(100, 1e9, true, 100));
    // Slow start: up to twice the most in flight.
    EXPECT_TRUE(CwndLimit(39, 1e9, false, 20));
    EXPECT_FALSE(CwndLimit(40, 1e9, false, 20));
    // Congestion avoidance: only a full window.
    EXPECT_FALSE(CwndLimit(39, 30, false, 20));
}

} // namespace
} // namespace hilosim

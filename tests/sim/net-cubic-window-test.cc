// CubicWindow (sim/net/cubic-window.h): Linux CUBIC's window cut and growth in congestion
// avoidance, fed ACK by ACK with exact times.
#include "sim/net/cubic-window.h"

#include "ns3/nstime.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

TEST(CubicWindow, ALossKeeps717Of1024AndFastConvergenceLowersTheNextPlateau)
{
    CubicWindow w;
    EXPECT_EQ(w.OnLoss(100), 70u); // 100 x 717 / 1024 = 70.02
    EXPECT_EQ(w.GetLastMaxCwnd(), 100u);
    // A second loss below the last plateau: W_max = 80 x (1024 + 717) / 2048 = 68.
    EXPECT_EQ(w.OnLoss(80), 56u);
    EXPECT_EQ(w.GetLastMaxCwnd(), 68u);
    EXPECT_EQ(w.OnLoss(1), 2u); // never below two segments
    w.Reset();
    EXPECT_EQ(w.GetLastMaxCwnd(), 0u);
}

TEST(CubicWindow, BeforeAnyLossTheWindowGrowsOneSegmentPerTwentyAcked)
{
    // No plateau yet: the curve starts at cwnd, so cnt would be 100 cwnd; Linux clamps it to 20
    // (5% per round trip). 100 segments ACKed one by one within a millisecond: 5 more.
    CubicWindow w;
    uint32_t cwnd = 100;
    for (int i = 0; i < 100; ++i)
    {
        cwnd = w.OnAck(ns3::MicroSeconds(5 * i), cwnd, 1, ns3::MilliSeconds(20));
    }
    EXPECT_EQ(cwnd, 105u);
}

TEST(CubicWindow, OnTheCurveTheWindowClimbsBackToThePlateauInKSeconds)
{
    // A loss at 1000 segments with a 100 ms RTT: cwnd 700, K = cbrt(300 / 0.4) = 9.09 s. Every
    // segment ACKed, a window per round trip. The curve, one minimum RTT ahead, is at 975
    // segments after 5 s and flat (within a segment of 1000) from about 7.6 s; the Reno
    // estimate, 8/15 segment per round trip, stays far below. Exact values from a line-by-line
    // transcription of Linux's bictcp_update and tcp_cong_avoid_ai (HZ = 1000).
    CubicWindow w;
    uint32_t cwnd = w.OnLoss(1000);
    ASSERT_EQ(cwnd, 700u);
    const ns3::Time rtt = ns3::MilliSeconds(100);
    ns3::Time now(0);
    auto rounds = [&](int n)
    {
        for (int r = 0; r < n; ++r)
        {
            const uint32_t acks = cwnd;
            for (uint32_t i = 1; i <= acks; ++i)
            {
                cwnd = w.OnAck(now + rtt * i / acks, cwnd, 1, rtt);
            }
            now += rtt;
        }
    };
    rounds(50);
    EXPECT_EQ(cwnd, 973u);
    rounds(50);
    EXPECT_EQ(cwnd, 1000u);
    // 753 in the transcription, whose clock counts whole milliseconds: the estimate is brought
    // up to date at most every 1/32 s, so it may lag by a segment.
    EXPECT_NEAR(w.GetRenoCwnd(), 753.0, 1.0);
}

} // namespace
} // namespace hilosim

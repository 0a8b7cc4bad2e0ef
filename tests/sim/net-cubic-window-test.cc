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

TEST(CubicWindow, IdleTimeMovesTheEpochSoTheCurveCountsSendingTimeOnly)
{
    // Linux's cubictcp_cwnd_event (CA_EVENT_TX_START): the epoch moves forward by the time
    // since the last data segment, never past now. Without it, t grows through every idle gap
    // between updates and the target C t^3 runs away from cwnd.
    CubicWindow w;
    w.OnSendAfterIdle(ns3::Seconds(5), ns3::Seconds(1)); // no epoch yet: nothing to move
    uint32_t cwnd = w.OnLoss(1000);
    cwnd = w.OnAck(ns3::Seconds(1), cwnd, 1, ns3::MilliSeconds(100)); // the epoch starts at 1 s
    EXPECT_EQ(w.GetEpochStart(), ns3::Seconds(1));
    w.OnSendAfterIdle(ns3::Seconds(3), ns3::Seconds(1.5));
    EXPECT_EQ(w.GetEpochStart(), ns3::Seconds(2.5));
    w.OnSendAfterIdle(ns3::Seconds(4), ns3::Seconds(3)); // 5.5 s: clamped to now
    EXPECT_EQ(w.GetEpochStart(), ns3::Seconds(4));

    // The same 700 ACKs 10 s after a loss at 1000 segments, with and without 9 s of it idle.
    // Shifted, the curve one RTT ahead is at 1000 - 0.4 (9.09 - 1.1)^3 = 796 segments, and cwnd
    // climbs towards it (763); unshifted it is at the plateau and cwnd gains a segment per two
    // ACKs (888).
    CubicWindow idle;
    CubicWindow busy;
    uint32_t a = idle.OnLoss(1000);
    uint32_t b = busy.OnLoss(1000);
    a = idle.OnAck(ns3::Seconds(0), a, 1, ns3::MilliSeconds(100));
    b = busy.OnAck(ns3::Seconds(0), b, 1, ns3::MilliSeconds(100));
    idle.OnSendAfterIdle(ns3::Seconds(9.5), ns3::Seconds(9));
    for (int i = 1; i <= 700; ++i)
    {
        a = idle.OnAck(ns3::Seconds(10) + ns3::MicroSeconds(100 * i), a, 1, ns3::MilliSeconds(100));
        b = busy.OnAck(ns3::Seconds(10) + ns3::MicroSeconds(100 * i), b, 1, ns3::MilliSeconds(100));
    }
    EXPECT_LE(a, 796u);
    EXPECT_GT(b, a + 100);
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

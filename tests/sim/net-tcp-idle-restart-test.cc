// TcpIdleRestart (sim/net/tcp-idle-restart.h): Linux's congestion-window restart after idle and
// its cwnd-limited growth rule, on a bare TcpSocketState driven by hand -- RTT samples set Linux's
// RTO (srtt + max(4 mdev, 200 ms)), the traced send sequence numbers say when the last data
// segment left, and CA_EVENT_TX_START applies tcp_cwnd_restart's rule -- and the wrapped
// algorithm keeps every other decision.
#include "sim/net/tcp-idle-restart.h"

#include "ns3/simulator.h"
#include "ns3/tcp-bbr.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-socket-state.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

constexpr uint32_t kSegment = 1000;

class TcpIdleRestartTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        tcb = ns3::CreateObject<ns3::TcpSocketState>();
        tcb->m_segmentSize = kSegment;
        tcb->m_initialCWnd = 10;
        tcb->m_cWnd = 800 * kSegment;
        tcb->m_ssThresh = 400 * kSegment;
        tcb->m_congState = ns3::TcpSocketState::CA_OPEN;
    }
    void TearDown() override { ns3::Simulator::Destroy(); }

    // At `at_s`: RTT samples of 80 ms (Linux RTO 280 ms), the last data segment sent at
    // `last_sent_s` (its timestamp echoed), then a send with nothing in flight at `send_s`.
    void Idle(ns3::Ptr<TcpIdleRestart> cc, double last_sent_s, double send_s)
    {
        ns3::Simulator::Schedule(ns3::Seconds(last_sent_s),
                                 [this, cc]()
                                 {
                                     for (int i = 0; i < 50; ++i)
                                         cc->PktsAcked(tcb, 1, ns3::MilliSeconds(80));
                                     Send(1);
                                 });
        ns3::Simulator::Schedule(ns3::Seconds(send_s),
                                 [this, cc]()
                                 {
                                     rto = cc->GetLinuxRto();
                                     cc->CwndEvent(tcb, ns3::TcpSocketState::CA_EVENT_TX_START);
                                 });
        ns3::Simulator::Run();
    }

    // `segments` data segments leave now, as TcpSocketBase sends them: the bytes in flight
    // refreshed before each, then SND.NXT and the highest sequence sent advanced.
    void Send(int segments)
    {
        for (int i = 0; i < segments; ++i)
        {
            tcb->m_bytesInFlight = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
            tcb->m_highTxMark = tcb->m_highTxMark.Get() + kSegment;
            tcb->m_nextTxSequence = tcb->m_highTxMark.Get();
        }
    }
    // Everything sent is acknowledged.
    void AckAll() { tcb->m_lastAckedSeq = tcb->m_highTxMark.Get(); }

    ns3::Ptr<ns3::TcpSocketState> tcb;
    ns3::Time rto;
};

TEST_F(TcpIdleRestartTest, CwndHalvesOncePerRtoOfIdleAndSsthreshKeepsThreeQuarters)
{
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    Idle(cc, 1.0, 1.0 + 0.85); // 0.85 s idle: three RTOs of 280 ms fit, minus the first
    EXPECT_EQ(rto, ns3::MilliSeconds(280));
    // delta = 850: 850-280 = 570 > 0 halve, 290 > 0 halve, 10 > 0 halve, -270 stop.
    EXPECT_EQ(tcb->m_cWnd.Get(), 100 * kSegment);
    EXPECT_EQ(tcb->m_ssThresh.Get(), 600 * kSegment); // max(400, 3/4 x 800)
    EXPECT_EQ(cc->GetName(), "TcpCubic");
}

TEST_F(TcpIdleRestartTest, OneRtoAndABitHalvesOnce)
{
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    Idle(cc, 1.0, 1.0 + 0.3); // RTO 280 ms: 20 ms beyond it
    EXPECT_EQ(tcb->m_cWnd.Get(), 400 * kSegment);
    EXPECT_EQ(tcb->m_ssThresh.Get(), 600 * kSegment);
}

TEST_F(TcpIdleRestartTest, InLossStateSsthreshStillKeepsThreeQuartersButNotInRecovery)
{
    // tcp_current_ssthresh leaves ssthresh alone only in CWR and Recovery.
    tcb->m_congState = ns3::TcpSocketState::CA_LOSS;
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    Idle(cc, 1.0, 1.3);
    EXPECT_EQ(tcb->m_cWnd.Get(), 400 * kSegment);
    EXPECT_EQ(tcb->m_ssThresh.Get(), 600 * kSegment);

    ns3::Simulator::Destroy();
    SetUp();
    tcb->m_congState = ns3::TcpSocketState::CA_RECOVERY;
    auto recovering = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    Idle(recovering, 1.0, 1.3);
    EXPECT_EQ(tcb->m_cWnd.Get(), 400 * kSegment);
    EXPECT_EQ(tcb->m_ssThresh.Get(), 400 * kSegment);
}

TEST_F(TcpIdleRestartTest, IdleCountsFromTheLastDataSegmentNotFromPureAcks)
{
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    // The peer echoes a timestamp 0.5 s after the last data segment left (our pure ACK for its
    // data): the idle time still counts from the data, 0.85 s, so three halvings.
    ns3::Simulator::Schedule(ns3::Seconds(1.5), [this]() { tcb->m_rcvTimestampEchoReply = 1500; });
    Idle(cc, 1.0, 1.85);
    EXPECT_EQ(tcb->m_cWnd.Get(), 100 * kSegment);
}

TEST_F(TcpIdleRestartTest, AWindowLimitedTransferDoesNotGrowAWindowItNeverUses)
{
    // Slow start with a 30-segment cwnd, but the send buffer holds 20 segments: flights of 20.
    tcb->m_cWnd = 30 * kSegment;
    tcb->m_ssThresh = 1000000 * kSegment;
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    ns3::Simulator::Schedule(ns3::Seconds(1.0),
                             [this, cc]()
                             {
                                 cc->Init(tcb);
                                 for (int flight = 0; flight < 5; ++flight)
                                 {
                                     Send(20);
                                     AckAll();
                                     cc->PktsAcked(tcb, 20, ns3::MilliSeconds(80));
                                     for (int i = 0; i < 20; ++i)
                                         cc->IncreaseWindow(tcb, 1);
                                 }
                             });
    ns3::Simulator::Schedule(ns3::Seconds(1.0 + 0.3),
                             [this, cc]()
                             {
                                 // Twice the flight, no more (tcp_is_cwnd_limited in slow start).
                                 EXPECT_EQ(tcb->m_cWnd.Get(), 40 * kSegment);
                                 cc->CwndEvent(tcb, ns3::TcpSocketState::CA_EVENT_TX_START);
                             });
    ns3::Simulator::Run();
    // One halving after a little more than one RTO: back to the window the transfer used.
    EXPECT_EQ(tcb->m_cWnd.Get(), 20 * kSegment);
}

TEST_F(TcpIdleRestartTest, AFlightThatFillsCwndGrowsIt)
{
    tcb->m_cWnd = 20 * kSegment;
    tcb->m_ssThresh = 1000000 * kSegment;
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    cc->Init(tcb);
    Send(20);
    EXPECT_TRUE(cc->IsCwndLimited(tcb));
    AckAll();
    for (int i = 0; i < 20; ++i)
        cc->IncreaseWindow(tcb, 1);
    EXPECT_EQ(tcb->m_cWnd.Get(), 40 * kSegment); // slow start doubles it
}

TEST_F(TcpIdleRestartTest, SwitchedOffThereIsNoRestart)
{
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>(), false);
    Idle(cc, 1.0, 3.0);
    EXPECT_EQ(tcb->m_cWnd.Get(), 800 * kSegment);
    EXPECT_EQ(tcb->m_ssThresh.Get(), 400 * kSegment);
}

TEST_F(TcpIdleRestartTest, NoRestartWithinOneRtoAndNeverBelowTheInitialWindow)
{
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    Idle(cc, 1.0, 1.25);
    EXPECT_EQ(tcb->m_cWnd.Get(), 800 * kSegment);
    EXPECT_EQ(tcb->m_ssThresh.Get(), 400 * kSegment);

    tcb->m_cWnd = 800 * kSegment;
    auto later = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    ns3::Simulator::Destroy();
    Idle(later, 1.0, 60.0); // a minute idle: down to the initial window, no further
    EXPECT_EQ(tcb->m_cWnd.Get(), 10 * kSegment);
}

TEST_F(TcpIdleRestartTest, AlgorithmsThatSetCwndThemselvesAreLeftAlone)
{
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpBbr>());
    EXPECT_TRUE(cc->HasCongControl());
    Idle(cc, 1.0, 3.0);
    EXPECT_EQ(tcb->m_cWnd.Get(), 800 * kSegment);
}

TEST_F(TcpIdleRestartTest, AForkedConnectionWrapsItsOwnCopyWithoutTheRttHistory)
{
    auto cc = ns3::CreateObject<TcpIdleRestart>(ns3::CreateObject<ns3::TcpCubic>());
    Idle(cc, 1.0, 1.1);
    ASSERT_FALSE(cc->GetLinuxRto().IsZero());
    auto forked = ns3::DynamicCast<TcpIdleRestart>(cc->Fork());
    ASSERT_TRUE(forked);
    EXPECT_TRUE(forked->GetLinuxRto().IsZero());
    EXPECT_EQ(forked->GetName(), "TcpCubic");
}

} // namespace
} // namespace hilosim

// TcpLinuxSocket (sim/net/tcp-linux-socket.h): lost last segments, which no duplicate ACK
// reports, are repaired after a tail loss probe 2 SRTT after the last ACK (RFC 8985 section 7)
// instead of by a retransmission timeout; a lost segment followed by a few delivered ones is
// found by RACK's time rule before any timeout; congestion control sees each ACK's own RTT sample,
// and a lone segment is acknowledged after Linux's 40 ms.
#include "net-test-util.h"
#include "net-worker-learner.h"

#include "sim/net/message-endpoint.h"
#include "sim/net/socket-options.h"
#include "sim/net/tcp-linux-socket.h"
#include "sim/net/topology-builder.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/error-model.h"
#include "ns3/queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hilosim
{
namespace
{

using testing::Link;
using testing::RandomPayload;

// Drops the data packets (IP packets of 120 bytes and more; pure ACKs are smaller) whose
// 1-based counts are in `drop`, and counts them all.
class DropDataPackets : public ns3::ErrorModel
{
  public:
    std::set<uint32_t> drop;
    uint32_t seen{0};

  private:
    bool DoCorrupt(ns3::Ptr<ns3::Packet> p) override
    {
        if (p->GetSize() < 120)
            return false;
        return drop.count(++seen) > 0;
    }
    void DoReset() override {}
};

struct Outcome
{
    double arrival_s{0}; // when the message arrived whole
    uint32_t data_packets{0};
};

// One 99 kB message from the worker to the learner over 100 Mbps / 10 ms (20 ms RTT), the
// learner's device dropping the data packets in `drop`.
Outcome
SendOne(const std::set<uint32_t>& drop)
{
    TopologySpec spec;
    spec.worker_links = {Link("100Mbps", "10ms", 1500)};
    testing::WorkerLearner pair(spec,
                                [](const PathInfo& path) {
                                    return SocketOptions::ForPath(path, ns3::TcpCubic::GetTypeId());
                                });
    auto model = ns3::CreateObject<DropDataPackets>();
    model->drop = drop;
    pair.GetTopology().GetWorkerLink(0).device_a->SetReceiveErrorModel(model);
    Outcome out;
    pair.SendAt(1.0, RandomPayload(99000, 7), &out.arrival_s); // the last segment: 568 bytes
    testing::RunAndDestroy(ns3::Seconds(60));
    out.data_packets = model->seen;
    return out;
}

class TcpLinuxSocketTest : public ::testing::Test
{
  protected:
    void TearDown() override
    {
        ns3::Config::SetDefault("hilosim::TcpLinuxSocket::TailLossProbe", ns3::BooleanValue(true));
        ns3::Config::SetDefault("hilosim::TcpLinuxSocket::Rack", ns3::BooleanValue(true));
    }
};

constexpr double kRtt = 0.020;

TEST_F(TcpLinuxSocketTest, ALostTailIsRepairedAfterAProbeNotATimeout)
{
    const Outcome clean = SendOne({});
    ASSERT_GT(clean.arrival_s, 1.0);
    const uint32_t last = clean.data_packets;

    // The last two segments are lost: nothing above them reaches the receiver, so no duplicate
    // ACK says so. The probe (the last segment again) leaves 2 SRTT + 2 ms after the last ACK;
    // its SACK shows the other one missing and RACK retransmits it at once: four to six round
    // trips after the lost originals would have arrived (SRTT includes the queue the burst
    // built), still well before the retransmission timeout.
    const Outcome probed = SendOne({last - 1, last});
    ASSERT_GT(probed.arrival_s, 0) << "never arrived";
    const double late = probed.arrival_s - clean.arrival_s;
    EXPECT_GT(late, 2 * kRtt);
    EXPECT_LT(late, 8 * kRtt);

    // Without the probe only the retransmission timeout repairs it: at least its 200 ms floor.
    ns3::Config::SetDefault("hilosim::TcpLinuxSocket::TailLossProbe", ns3::BooleanValue(false));
    const Outcome timedOut = SendOne({last - 1, last});
    ASSERT_GT(timedOut.arrival_s, 0);
    EXPECT_GT(timedOut.arrival_s - clean.arrival_s, 0.2);
}

TEST_F(TcpLinuxSocketTest, ALossFollowedByTwoDeliveredSegmentsIsFoundByRack)
{
    // The third-to-last segment is lost: two delivered segments after it give two duplicate
    // ACKs, one short of fast retransmit. RACK marks it lost one RTT (and a quarter of the
    // minimum RTT) after it was sent.
    const Outcome clean = SendOne({});
    const uint32_t lost = clean.data_packets - 2;
    ns3::Config::SetDefault("hilosim::TcpLinuxSocket::TailLossProbe", ns3::BooleanValue(false));
    const Outcome rack = SendOne({lost});
    ASSERT_GT(rack.arrival_s, 0);
    EXPECT_LT(rack.arrival_s - clean.arrival_s, 3 * kRtt);

    ns3::Config::SetDefault("hilosim::TcpLinuxSocket::Rack", ns3::BooleanValue(false));
    const Outcome timedOut = SendOne({lost});
    ASSERT_GT(timedOut.arrival_s, 0);
    EXPECT_GT(timedOut.arrival_s - clean.arrival_s, 0.2);
}

// The RTT values the worker's congestion control was handed (TcpSocketState::m_lastRtt), the last
// one set at each instant, over 100 Mbps / 40 ms after `sends` (start s, bytes) from the worker.
std::map<double, double>
RttsSeenByCongestionControl(const std::vector<std::pair<double, size_t>>& sends)
{
    TopologySpec spec;
    spec.worker_links = {Link("100Mbps", "40ms", 1500)};
    testing::WorkerLearner pair(spec,
                                [](const PathInfo& path) {
                                    return SocketOptions::ForPath(path, ns3::TcpCubic::GetTypeId());
                                });
    std::vector<double> arrived(sends.size(), 0);
    for (size_t i = 0; i < sends.size(); ++i)
    {
        pair.SendAt(sends[i].first, RandomPayload(sends[i].second, i + 1), &arrived[i]);
    }
    std::map<double, double> seen;
    const std::string path = "/NodeList/" +
                             std::to_string(pair.GetTopology().GetWorker(0)->GetId()) +
                             "/$ns3::TcpL4Protocol/SocketList/*/RTT";
    ns3::Simulator::Schedule(
        ns3::Seconds(0.5),
        [&seen, path]()
        {
            ns3::Config::ConnectWithoutContext(
                path, ns3::MakeCallback(+[](std::map<double, double>* out, ns3::Time, ns3::Time v) {
                          (*out)[ns3::Simulator::Now().GetSeconds()] = v.GetSeconds();
                      }).Bind(&seen));
        });
    testing::RunAndDestroy(ns3::Seconds(60));
    for (double a : arrived)
    {
        EXPECT_GT(a, 0) << "a message never arrived";
    }
    return seen;
}

// On-the-wire time of one packet of `ipBytes` at 100 Mbps (point-to-point header: 2 bytes).
double
WireS(double ipBytes)
{
    return (ipBytes + 2) * 8 / 100e6;
}

TEST(TcpLinuxSocketRtt, EachAckHandsCongestionControlItsOwnSampleNotTheSrtt)
{
    // A 2 MB message queues at the worker's egress (samples above 95 ms; the SRTT they feed still
    // holds about 1 ms of that queue when it ends). 3 s later a message of about ten segments
    // leaves at once (the restart after idle brings cwnd back to 10). The first ACK covers the
    // first two, so its sample -- Linux's ca_rtt_us -- is the path's: 80 ms, two data packets of
    // 1500 bytes on the wire and the ACK (52 bytes: TCP and IP headers, timestamp option).
    const double second = 4.0;
    const auto seen = RttsSeenByCongestionControl({{1.0, 2000000}, {second, 10 * 1448 - 64}});
    auto first = seen.upper_bound(second);
    ASSERT_NE(first, seen.end());
    EXPECT_NEAR(first->second, 0.080 + 2 * WireS(1500) + WireS(52), 2e-6);
    // The 2 MB message's own samples carried its queue.
    double largest = 0;
    for (const auto& [t, rtt] : seen)
    {
        if (t < second)
            largest = std::max(largest, rtt);
    }
    EXPECT_GT(largest, 0.095);
}

TEST(TcpLinuxSocketRtt, ALoneSegmentIsAcknowledgedAfterLinuxs40Ms)
{
    // A message of one segment waits at the receiver for a second one that never comes, until
    // the delayed-ACK timer: Linux's 40 ms (TCP_ATO_MIN), not ns-3's default 200 ms.
    const double at = 3.0;
    const auto seen = RttsSeenByCongestionControl({{1.0, 100000}, {at, 200}});
    auto sample = seen.upper_bound(at);
    ASSERT_NE(sample, seen.end());
    EXPECT_NEAR(sample->second, 0.080 + 0.040, 0.0002);
}

TEST(TcpLinuxSocketHost, AWindowLargerThanTheHostsQueueWaitsThereInsteadOfBeingDropped)
{
    // 1 Gbps / 10 ms with a 100-packet FIFO (150 kB) at each end, a 4 MB window and no restart
    // after idle: the second message leaves as one unpaced burst of about 2 MB from the worker.
    // A Linux host holds such a burst in the socket (TCP small queues) and drops none of it; the
    // worker's own egress queue must not either, and the message arrives at the link rate.
    TopologySpec spec;
    spec.worker_links = {Link("1Gbps", "10ms", 1500)};
    spec.worker_links[0].queue_packets = 100;
    testing::WorkerLearner pair(spec,
                                [](const PathInfo& path)
                                {
                                    BufferSizing sizing;
                                    sizing.fixed_bytes = 4 << 20;
                                    SocketOptions options = SocketOptions::ForPath(
                                        path, ns3::TcpCubic::GetTypeId(), sizing);
                                    options.restart_after_idle = false;
                                    return options;
                                });
    double firstArrived = 0;
    double arrived = 0;
    const double sentAt = 3.0;
    pair.SendAt(1.0, RandomPayload(4000000, 1), &firstArrived);
    pair.SendAt(sentAt, RandomPayload(2000000, 2), &arrived);
    auto& topo = pair.GetTopology();
    auto disc = topo.GetWorker(0)->GetObject<ns3::TrafficControlLayer>()->GetRootQueueDiscOnDevice(
        topo.GetWorkerLink(0).device_b);
    ASSERT_TRUE(disc);
    ns3::Simulator::Stop(ns3::Seconds(30));
    ns3::Simulator::Run();
    const uint32_t dropped = disc->GetStats().nTotalDroppedPackets;
    ns3::Simulator::Destroy();
    EXPECT_EQ(dropped, 0u);
    ASSERT_GT(arrived, sentAt);
    // 2 MB at 1 Gbps (16 ms of payload, about 17 ms on the wire) plus 10 ms of propagation.
    EXPECT_LT(arrived - sentAt, 0.040);
}

} // namespace
} // namespace hilosim

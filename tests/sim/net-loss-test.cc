// Heavy loss with any socket buffers: 10% loss each way completes and delivers every byte, also
// with buffer pairs that make the receive window the binding one, which ns-3 3.37 crashes on
// (see sim/net/socket-options.h for the root cause); SafeBuffers keeps the bound on data in
// flight and moves it to the sender.
#include "net-test-util.h"

#include "sim/net/message-endpoint.h"
#include "sim/net/socket-options.h"
#include "sim/net/topology-builder.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

#include <string>

namespace hilosim
{
namespace
{

using testing::Link;
using testing::RandomPayload;

/// One worker sends `messages` x `bytes` real bytes to the learner over `link`, both ends with
/// `options`; returns the bytes delivered intact.
uint64_t
Transfer(const LinkSpec& link, const SocketOptions& options, int messages, size_t bytes)
{
    TopologySpec spec;
    spec.worker_links = {link};
    auto topo = TopologyBuilder::Build(spec);
    EXPECT_TRUE(topo.ok());
    auto learner = ns3::CreateObject<MessageEndpoint>();
    learner->SetAttribute("LocalId", ns3::UintegerValue(1000));
    learner->Install(topo->GetLearner());
    auto worker = ns3::CreateObject<MessageEndpoint>();
    worker->Install(topo->GetWorker(0));
    learner->Listen(7000, options);
    worker->Connect(1000, topo->GetLearnerAddressFor(0), 7000, options);
    std::vector<std::shared_ptr<const std::string>> sent;
    uint64_t intact = 0;
    learner->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
        [&](uint32_t, const Message& m)
        {
            if (m.sequence < sent.size() && m.payload == *sent[m.sequence])
                intact += m.payload.size();
        }));
    for (int i = 0; i < messages; ++i)
    {
        sent.push_back(RandomPayload(bytes, static_cast<uint32_t>(i)));
        EXPECT_TRUE(worker->Send(1000, 1, sent.back(), bytes).ok());
    }
    testing::RunAndDestroy(ns3::Seconds(3600));
    return intact;
}

TEST(NetLoss, TenPercentLossCompletesWithAnyBuffers)
{
    // 100 Mbps and 80 ms RTT: a 1 MB window; every pair below limits the window well under it.
    const LinkSpec lossy = Link("100Mbps", "40ms", 1500, 0.10);
    struct Buffers
    {
        uint32_t send;
        uint32_t receive;
    };
    // The first two made ns-3 3.37 crash within simulated seconds: the receive window binds.
    for (const Buffers& b : {Buffers{200000, 100000}, Buffers{400000, 65536}, Buffers{16384, 16384},
                             Buffers{1 << 20, 1 << 20}, Buffers{65536, 4 << 20}})
    {
        SocketOptions o;
        o.send_buffer_bytes = b.send;
        o.receive_buffer_bytes = b.receive;
        EXPECT_EQ(Transfer(lossy, o, 4, 500000), 2000000u)
            << "send " << b.send << " receive " << b.receive;
    }
}

TEST(NetLoss, SafeBuffersKeepTheBoundOnDataInFlight)
{
    SocketOptions o;
    o.segment_bytes = 1448;
    o.send_buffer_bytes = 200000;
    o.receive_buffer_bytes = 100000;
    SocketOptions safe = o.SafeBuffers();
    EXPECT_EQ(safe.send_buffer_bytes, 100000u) << "min(send, receive): the same bound";
    EXPECT_EQ(safe.receive_buffer_bytes, 2 * 100000u + 4 * 1448u);
    o.receive_buffer_bytes = 150000; // above send, below 2 x send + 4 segments
    o.send_buffer_bytes = 100000;
    safe = o.SafeBuffers();
    EXPECT_EQ(safe.send_buffer_bytes, 100000u);
    EXPECT_EQ(safe.receive_buffer_bytes, ReceiveBufferFor(100000, 1448));
    // ForPath's options are safe already.
    const LinkSpec fast = Link("1Gbps", "40ms");
    const SocketOptions path =
        SocketOptions::ForPath(PathInfo::Over({&fast}), ns3::TcpCubic::GetTypeId());
    EXPECT_EQ(path.SafeBuffers().send_buffer_bytes, path.send_buffer_bytes);
    EXPECT_EQ(path.SafeBuffers().receive_buffer_bytes, path.receive_buffer_bytes);
}

} // namespace
} // namespace hilosim

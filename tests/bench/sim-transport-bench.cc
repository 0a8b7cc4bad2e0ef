// What the message transport costs the simulator: wall seconds (and events) per simulated transfer.
// Not run by CTest. Usage:
//   build/tests/sim-transport-bench [--quick] [--only=SUBSTRING] [--model=packet|flow|stock]
// prints a table (results/sim/transport-cost.txt; --model=flow:
// results/sim/transport-cost-flow.txt). --model=stock runs each case twice in a row, through the
// project's packet model and through stock ns-3 (BulkSendApplication to a PacketSink over ns-3's
// own TcpSocketBase with TcpCubic, SACK, and the packet model's BDP-sized buffers and segment
// size, on the same topology), and prints both CPU costs per simulated data segment (payload
// bytes / segment size, retransmissions not counted) and their ratio
// (results/sim/transport-cost-stock.md).
// --quick skips the slowest case. The flow model also runs N = 256 and 1024 workers.
// Cases: one 50 MB (wire) message over 1 Gbps / 40 ms with 1500 and 9000-byte MTUs, under the
// default BDP sizing and under fixed 1 MB / 8 MB buffers (figures in sim/net/socket-options.h);
// and a 10 MB message from the learner to N = 8 and 32 workers over 100 Mbps / 40 ms star links.
#include "sim/net/flow/flow-network.h"
#include "sim/net/flow/flow-transport-helper.h"
#include "sim/net/message-endpoint.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"
#include "sim/net/units.h"

#include "ns3/applications-module.h"
#include "ns3/config.h"
#include "ns3/inet-socket-address.h"
#include "ns3/simulator.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-l4-protocol.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

namespace
{

using namespace hilosim;

struct Case
{
    std::string name;
    uint32_t workers;
    std::string rate;
    std::string delay;
    uint32_t mtu;
    uint64_t wireBytes;
    std::optional<uint32_t> fixedBuffer; // bytes; default: BDP sizing
};

struct Result
{
    double wallS;
    double cpuS;      // process CPU time: what wall time would be on an idle machine
    double transferS; // simulated: send to last receiver done
    uint64_t events;
    std::string options;
    uint32_t segment_bytes{0};
};

// Runs the simulation to its end (an hour at most) and records its wall and CPU seconds and events.
void
RunTimed(Result& r)
{
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    ns3::Simulator::Stop(ns3::Seconds(3600));
    ns3::Simulator::Run();
    r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cpuS = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    r.events = ns3::Simulator::GetEventCount();
    ns3::Simulator::Destroy();
}

// The case's star: the learner and each worker behind its own link (exits on a bad case).
hilo::StatusOr<Topology>
Star(const Case& c)
{
    LinkSpec link;
    link.rate = *ParseDataRate(c.rate);
    link.delay = *ParseTime(c.delay);
    link.mtu = c.mtu;
    TopologySpec spec;
    spec.worker_links.assign(c.workers, link);
    auto topo = TopologyBuilder::Build(spec);
    if (!topo.ok())
    {
        std::fprintf(stderr, "%s\n", topo.status().ToString().c_str());
        std::exit(1);
    }
    return topo;
}

// The case's socket buffers: BDP sizing ($BENCH_BDP_MULTIPLE times the BDP) or fixed.
TransportConfig
ConfigFor(const Case& c)
{
    TransportConfig config;
    if (const char* m = std::getenv("BENCH_BDP_MULTIPLE"))
    {
        config.buffers.bdp_multiple = std::atof(m);
    }
    if (c.fixedBuffer)
    {
        config.buffers.fixed_bytes = *c.fixedBuffer;
    }
    return config;
}

Result
Run(const Case& c, bool flow)
{
    const hilo::StatusOr<Topology> topo = Star(c);
    const TransportConfig config = ConfigFor(c);
    TransportEndpoints ends =
        flow ? FlowTransportHelper(config).Install(*topo) : TransportHelper(config).Install(*topo);
    auto payload = std::make_shared<const std::string>(100000, 'x');
    uint32_t connected = 0;
    uint32_t received = 0;
    ns3::Time start;
    ns3::Time last;
    ends.GetLearner()->SetPeerConnectedCallback(ns3::Callback<void, uint32_t>(
        [&](uint32_t)
        {
            if (++connected == c.workers)
            {
                start = ns3::Simulator::Now();
                for (uint32_t w = 0; w < c.workers; ++w)
                {
                    (void) ends.GetLearner()->Send(WorkerPeerId(w), 1, payload, c.wireBytes);
                }
            }
        }));
    for (uint32_t w = 0; w < c.workers; ++w)
    {
        ends.GetWorker(w)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [&](uint32_t, const Message& m)
            {
                ++received;
                last = std::max(last, m.received_at);
            }));
    }
    Result r;
    r.options = ends.GetWorkerOptions(0).ToString();
    r.segment_bytes = ends.GetWorkerOptions(0).segment_bytes;
    RunTimed(r);
    if (received != c.workers)
    {
        std::fprintf(stderr, "%s: only %u of %u receivers got the message\n", c.name.c_str(),
                     received, c.workers);
        std::exit(1);
    }
    r.transferS = (last - start).GetSeconds();
    return r;
}

// The same transfer by stock ns-3: no project code but the topology (links, addresses, routes).
Result
RunStock(const Case& c)
{
    const hilo::StatusOr<Topology> topo = Star(c);
    const TransportConfig config = ConfigFor(c);
    std::vector<SocketOptions> options;
    PlanConnections(*topo, config, &options);
    const SocketOptions& o = options.at(0);
    // Defaults read when BulkSend and PacketSink create their sockets (the project's own sockets
    // set each of these explicitly, so they do not leak into its runs).
    ns3::Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                            ns3::TypeIdValue(ns3::TcpCubic::GetTypeId()));
    ns3::Config::SetDefault("ns3::TcpSocket::SegmentSize", ns3::UintegerValue(o.segment_bytes));
    ns3::Config::SetDefault("ns3::TcpSocket::SndBufSize", ns3::UintegerValue(o.send_buffer_bytes));
    ns3::Config::SetDefault("ns3::TcpSocket::RcvBufSize",
                            ns3::UintegerValue(o.receive_buffer_bytes));
    ns3::Config::SetDefault("ns3::TcpSocketBase::Sack", ns3::BooleanValue(true));
    const uint16_t port = 9000;
    std::vector<uint64_t> got(c.workers, 0);
    uint32_t done = 0;
    ns3::Time last;
    for (uint32_t w = 0; w < c.workers; ++w)
    {
        ns3::PacketSinkHelper sink("ns3::TcpSocketFactory",
                                   ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port));
        ns3::ApplicationContainer apps = sink.Install(topo->GetWorker(w));
        apps.Start(ns3::Seconds(0));
        apps.Get(0)->TraceConnectWithoutContext(
            "Rx", ns3::Callback<void, ns3::Ptr<const ns3::Packet>, const ns3::Address&>(
                      [&, w](ns3::Ptr<const ns3::Packet> p, const ns3::Address&)
                      {
                          got[w] += p->GetSize();
                          if (got[w] == c.wireBytes)
                          {
                              ++done;
                              last = ns3::Simulator::Now();
                          }
                      }));
        ns3::BulkSendHelper bulk("ns3::TcpSocketFactory",
                                 ns3::InetSocketAddress(topo->GetWorkerAddress(w), port));
        bulk.SetAttribute("MaxBytes", ns3::UintegerValue(c.wireBytes));
        bulk.SetAttribute("SendSize", ns3::UintegerValue(o.segment_bytes));
        ns3::ApplicationContainer send = bulk.Install(topo->GetLearner());
        send.Start(ns3::Seconds(0));
    }
    Result r;
    r.options = o.ToString() + " (stock TcpCubic)";
    RunTimed(r);
    if (done != c.workers)
    {
        std::fprintf(stderr, "%s (stock): only %u of %u receivers got every byte\n", c.name.c_str(),
                     done, c.workers);
        std::exit(1);
    }
    r.transferS = last.GetSeconds(); // from the connection's start (the handshake included)
    r.segment_bytes = o.segment_bytes;
    return r;
}

} // namespace

int
main(int argc, char** argv)
{
    bool quick = false;
    bool flow = false;
    bool stock = false;
    std::string only;
    for (int i = 1; i < argc; ++i)
    {
        if (std::strcmp(argv[i], "--quick") == 0)
        {
            quick = true;
        }
        else if (std::strncmp(argv[i], "--only=", 7) == 0)
        {
            only = argv[i] + 7;
        }
        else if (std::strcmp(argv[i], "--model=flow") == 0)
        {
            flow = true;
        }
        else if (std::strcmp(argv[i], "--model=packet") == 0)
        {
            flow = false;
        }
        else if (std::strcmp(argv[i], "--model=stock") == 0)
        {
            stock = true;
        }
        else
        {
            std::fprintf(stderr,
                         "usage: %s [--quick] [--only=SUBSTRING] [--model=packet|flow|stock]\n",
                         argv[0]);
            return 2;
        }
    }
    const uint64_t MB = 1000000;
    std::vector<Case> cases = {
        {"50MB 1Gbps/40ms mtu1500 bdp-sized", 1, "1Gbps", "40ms", 1500, 50 * MB, std::nullopt},
        {"50MB 1Gbps/40ms mtu9000 bdp-sized", 1, "1Gbps", "40ms", 9000, 50 * MB, std::nullopt},
        {"50MB 1Gbps/40ms mtu1500 buf=1MB", 1, "1Gbps", "40ms", 1500, 50 * MB, 1 << 20},
        {"50MB 1Gbps/40ms mtu9000 buf=8MB", 1, "1Gbps", "40ms", 9000, 50 * MB, 8 << 20},
        {"10MB to N=8 100Mbps/40ms mtu1500", 8, "100Mbps", "40ms", 1500, 10 * MB, std::nullopt},
        {"10MB to N=8 100Mbps/40ms mtu9000", 8, "100Mbps", "40ms", 9000, 10 * MB, std::nullopt},
        {"10MB to N=32 100Mbps/40ms mtu1500", 32, "100Mbps", "40ms", 1500, 10 * MB, std::nullopt},
        {"10MB to N=32 100Mbps/40ms mtu9000", 32, "100Mbps", "40ms", 9000, 10 * MB, std::nullopt},
    };
    if (flow)
    {
        for (uint32_t n : {256u, 1024u})
        {
            cases.push_back({"10MB to N=" + std::to_string(n) + " 100Mbps/40ms mtu1500", n,
                             "100Mbps", "40ms", 1500, 10 * MB, std::nullopt});
        }
    }
    if (!quick)
    {
        cases.push_back(
            {"50MB 1Gbps/40ms mtu1500 buf=8MB", 1, "1Gbps", "40ms", 1500, 50 * MB, 8 << 20});
    }
    if (stock)
    {
        std::printf("%-36s %10s %8s %8s %9s %9s %7s %10s %10s %10s %10s\n", "case", "segments",
                    "cpu_s", "stock", "us/seg", "stock", "ratio", "events", "stock", "xfer_s",
                    "stock");
        for (const Case& c : cases)
        {
            if (!only.empty() && c.name.find(only) == std::string::npos)
            {
                continue;
            }
            const Result p = Run(c, /*flow=*/false);
            const Result s = RunStock(c);
            const double segments =
                std::ceil(static_cast<double>(c.wireBytes) / p.segment_bytes) * c.workers;
            std::printf("%-36s %10.0f %8.2f %8.2f %9.2f %9.2f %7.3f %10llu %10llu %10.3f %10.3f\n",
                        c.name.c_str(), segments, p.cpuS, s.cpuS, p.cpuS / segments * 1e6,
                        s.cpuS / segments * 1e6, p.cpuS / s.cpuS,
                        static_cast<unsigned long long>(p.events),
                        static_cast<unsigned long long>(s.events), p.transferS, s.transferS);
            std::fflush(stdout);
        }
        return 0;
    }
    std::printf("%-36s %8s %8s %10s %12s %10s  %s\n", "case", "wall_s", "cpu_s", "sim_xfer_s",
                "events", "Mbit/s", "socket options (worker side)");
    for (const Case& c : cases)
    {
        if (!only.empty() && c.name.find(only) == std::string::npos)
        {
            continue;
        }
        Result r = Run(c, flow);
        const double mbps = c.workers * c.wireBytes * 8.0 / r.transferS / 1e6;
        std::printf("%-36s %8.2f %8.2f %10.3f %12llu %10.1f  %s\n", c.name.c_str(), r.wallS, r.cpuS,
                    r.transferS, static_cast<unsigned long long>(r.events), mbps,
                    r.options.c_str());
        std::fflush(stdout);
    }
    return 0;
}

// One message at a time over a single clean link, in both network models, against the closed
// form bytes / bandwidth + one-way delay (+ slow-start round trips for the first message on a
// fresh connection). Not run by CTest. Usage:
//   build/tests/sim-single-link-bench [--bytes=N] [--messages=K] [--only=SUBSTRING] [--flow-only]
//                                     [--loss=P] [--rates=R1,R2,...] [--delays=D1,D2,...] [--mtu=N]
//                                     [--warm]
// prints one row per link, model and message (results/sim/single-link-transfer.md). Socket
// buffers are "auto" (sim/net/socket-options.h). Links of 1 Gbps and more use a 9000-byte MTU
// (the packet model's cost; header overhead 0.6%), slower ones 1500 (3.7%). --loss sets a random
// loss probability on the link (each direction); the closed-form columns then ignore it. --warm
// switches Linux's slow start after idle off (network.slow_start_after_idle: false), so messages
// after the first keep the window the earlier ones grew.
#include "sim/net/flow/flow-transport-helper.h"
#include "sim/net/flow/tcp-flow-model.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"
#include "sim/net/units.h"

#include "ns3/simulator.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace
{

using namespace hilosim;

struct Result
{
    std::vector<double> latencyS; // per message: receive - send
    double wallS{0};
    std::string options;
};

Result
Run(const LinkSpec& link, uint64_t bytes, int messages, bool flow, bool warm)
{
    TopologySpec spec;
    spec.worker_links = {link};
    auto topo = TopologyBuilder::Build(spec);
    if (!topo.ok())
    {
        std::fprintf(stderr, "%s\n", topo.status().ToString().c_str());
        std::exit(1);
    }
    TransportConfig config;
    config.slow_start_after_idle = !warm;
    TransportEndpoints ends =
        flow ? FlowTransportHelper(config).Install(*topo) : TransportHelper(config).Install(*topo);
    auto payload = std::make_shared<const std::string>(1000, 'x');
    auto learner = ends.GetLearner();
    Result r;
    r.options = ends.GetWorkerOptions(0).ToString();
    auto send = [&]() { (void) learner->Send(WorkerPeerId(0), 1, payload, bytes); };
    learner->SetPeerConnectedCallback(ns3::Callback<void, uint32_t>([&](uint32_t) { send(); }));
    ends.GetWorker(0)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
        [&](uint32_t, const Message& m)
        {
            r.latencyS.push_back((m.received_at - m.sent_at).GetSeconds());
            if (static_cast<int>(r.latencyS.size()) < messages)
            {
                // An idle second between messages, as between updates.
                ns3::Simulator::Schedule(ns3::Seconds(1), send);
            }
        }));
    const auto t0 = std::chrono::steady_clock::now();
    ns3::Simulator::Stop(ns3::Seconds(36000));
    ns3::Simulator::Run();
    r.wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ns3::Simulator::Destroy();
    return r;
}

} // namespace

int
main(int argc, char** argv)
{
    uint64_t bytes = 90000000; // a full bf16 update of Llama-3.2-1B's rank-64 adapter
    int messages = 3;
    bool flowOnly = false;
    bool warm = false;
    std::string only;
    double loss = 0;
    uint32_t mtu = 0; // 0: 9000 at 1 Gbps and more, 1500 below
    std::vector<std::string> rates = {"10Mbps", "100Mbps", "1Gbps", "10Gbps"};
    std::vector<std::string> delays = {"10ms", "40ms", "100ms"};
    auto split = [](const char* text)
    {
        std::vector<std::string> out;
        std::string item;
        for (const char* c = text;; ++c)
        {
            if (*c == ',' || *c == '\0')
            {
                if (!item.empty())
                    out.push_back(item);
                item.clear();
                if (*c == '\0')
                    break;
            }
            else
                item += *c;
        }
        return out;
    };
    for (int i = 1; i < argc; ++i)
    {
        if (std::strncmp(argv[i], "--bytes=", 8) == 0)
            bytes = std::strtoull(argv[i] + 8, nullptr, 10);
        else if (std::strncmp(argv[i], "--messages=", 11) == 0)
            messages = std::atoi(argv[i] + 11);
        else if (std::strncmp(argv[i], "--only=", 7) == 0)
            only = argv[i] + 7;
        else if (std::strcmp(argv[i], "--warm") == 0)
            warm = true;
        else if (std::strcmp(argv[i], "--flow-only") == 0)
            flowOnly = true;
        else if (std::strncmp(argv[i], "--mtu=", 6) == 0)
            mtu = static_cast<uint32_t>(std::atoi(argv[i] + 6));
        else if (std::strncmp(argv[i], "--loss=", 7) == 0)
            loss = std::atof(argv[i] + 7);
        else if (std::strncmp(argv[i], "--rates=", 8) == 0)
            rates = split(argv[i] + 8);
        else if (std::strncmp(argv[i], "--delays=", 9) == 0)
            delays = split(argv[i] + 9);
        else
        {
            std::fprintf(stderr,
                         "usage: %s [--bytes=N] [--messages=K] [--only=SUBSTRING] [--flow-only] "
                         "[--loss=P] [--rates=R1,...] [--delays=D1,...] [--mtu=N] [--warm]\n",
                         argv[0]);
            return 2;
        }
    }
    std::printf("%-18s %-6s %3s %10s %10s %7s %10s %7s %8s  %s\n", "link", "model", "msg",
                "latency_s", "ideal_s", "ratio", "ideal+ss_s", "ratio", "wall_s", "options");
    for (const std::string& rate : rates)
    {
        for (const std::string& delay : delays)
        {
            LinkSpec link;
            auto parsedRate = ParseDataRate(rate);
            auto parsedDelay = ParseTime(delay);
            if (!parsedRate.ok() || !parsedDelay.ok() || !(loss >= 0 && loss < 1))
            {
                std::fprintf(stderr, "bad --rates, --delays or --loss\n");
                return 2;
            }
            link.rate = *parsedRate;
            link.delay = *parsedDelay;
            link.loss_rate = loss;
            link.mtu = mtu != 0 ? mtu : link.rate.GetBitRate() >= 1000000000 ? 9000 : 1500;
            if (link.mtu < 576 || link.mtu > 9000)
            {
                std::fprintf(stderr, "bad --mtu\n");
                return 2;
            }
            const std::string name = rate + "/" + delay;
            if (!only.empty() && name.find(only) == std::string::npos)
                continue;
            // Closed form: serialization of the bytes at the link rate plus propagation; a
            // fresh connection adds one round trip per slow-start round until its window
            // (10 segments, doubling) covers the BDP or the message.
            const double linkBps = static_cast<double>(link.rate.GetBitRate()) / 8.0;
            const double owd = link.delay.GetSeconds();
            const double ideal = static_cast<double>(bytes) / linkBps + owd;
            const double iw = kInitialCwndSegments * SegmentBytesForMtu(link.mtu);
            const double bdp = linkBps * 2 * owd;
            const double reach = std::min<double>(bdp, static_cast<double>(bytes));
            const double rounds = reach > iw ? std::ceil(std::log2(reach / iw)) : 0;
            const double idealCold = ideal + rounds * 2 * owd;
            for (bool flow : {false, true})
            {
                if (flowOnly && !flow)
                    continue;
                const Result r = Run(link, bytes, messages, flow, warm);
                for (size_t m = 0; m < r.latencyS.size(); ++m)
                {
                    const double closed = m == 0 ? idealCold : ideal;
                    std::printf("%-18s %-6s %3zu %10.4f %10.4f %7.3f %10.4f %7.3f %8.2f  %s\n",
                                name.c_str(), flow ? "flow" : "packet", m + 1, r.latencyS[m], ideal,
                                r.latencyS[m] / ideal, closed, r.latencyS[m] / closed,
                                m == 0 ? r.wallS : 0.0, m == 0 ? r.options.c_str() : "");
                }
                std::fflush(stdout);
            }
        }
    }
    return 0;
}

// network: topology, TCP, the learner uplink, regions and their links; the flow model's limits.
#include "sim/scenario/scenario-checker.h"

#include "sim/net/flow/tcp-flow-model.h"
#include "sim/net/link-spec.h"
#include "sim/net/units.h"

#include <map>

namespace hilosim
{
namespace scenario_check
{

namespace
{

const std::vector<std::string> kTopologies = {"star", "regions", "relay"};
const std::vector<std::string> kRelayForwarding = {"stream", "store_and_forward"};
const std::vector<std::string> kNetworkModels = {"packet", "flow"};
// Explicit socket buffers: below 16 KiB a window holds too few segments to model TCP; above
// 256 MiB (a 10 Gbps path with a 200 ms RTT) ns-3's receive window would pass its 1 GiB limit.
constexpr uint64_t kMinTcpBufferBytes = 16 * 1024;
constexpr uint64_t kMaxTcpBufferBytes = 256 * 1024 * 1024;

} // namespace

// A complete link (every field valid, bandwidth set) in typed values.
hilosim::LinkSpec
ToLinkSpec(const Link& l)
{
    hilosim::LinkSpec out;
    auto rate = hilosim::ParseDataRate(l.bandwidth());
    if (rate.ok())
        out.rate = *rate;
    auto delay = hilosim::ParseTime(l.delay().empty() ? "0ms" : l.delay());
    if (delay.ok())
        out.delay = *delay;
    out.loss_rate = l.has_loss() ? l.loss() : 0.0;
    out.mtu = static_cast<uint32_t>(l.has_mtu() ? l.mtu() : 1500);
    out.queue_disc = l.queue().empty() ? "fifo" : l.queue();
    out.queue_packets = static_cast<uint32_t>(l.has_queue_packets() ? l.queue_packets() : 1000);
    return out;
}

bool
Checker::CheckLinkFields(const Node& n, const Link& link)
{
    bool ok = true;
    if (!link.bandwidth().empty())
    {
        auto bw = hilosim::ParseDataRate(link.bandwidth());
        if (!bw.ok())
        {
            Error(n, "bandwidth", bw.status().message());
            ok = false;
        }
    }
    if (!link.delay().empty())
    {
        auto d = hilosim::ParseTime(link.delay());
        if (!d.ok())
        {
            Error(n, "delay", d.status().message());
            ok = false;
        }
    }
    if (link.has_loss())
        ok &= DoubleIn(n, "loss", link.loss(), 0, false, 1, true);
    if (link.has_mtu())
        ok &= IntIn(n, "mtu", link.mtu(), 576, 9000);
    if (!link.queue().empty())
        ok &= Choice(n, "queue", link.queue(), hilosim::SupportedQueueDiscs(), "queue discipline");
    if (link.has_queue_packets())
        ok &= IntIn(n, "queue_packets", link.queue_packets(), 1, 1000000);
    return ok;
}

void
Checker::CheckNetwork(const Node& n, const Network& net, ResolvedNetwork* out)
{
    if (Choice(n, "topology", net.topology(), kTopologies, "topology"))
    {
        out->topology = net.topology() == "regions" ? TopologyKind::kRegions
                        : net.topology() == "relay" ? TopologyKind::kRelay
                                                    : TopologyKind::kStar;
    }
    auto tcp = hilosim::ParseTcpVariant(net.tcp());
    if (tcp.ok())
    {
        out->tcp = net.tcp();
        out->tcp_type = *tcp;
    }
    else
    {
        Error(n, "tcp", tcp.status().message());
    }
    if (Choice(n, "model", net.model(), kNetworkModels, "network model"))
    {
        out->model = net.model() == "flow" ? NetworkModel::kFlow : NetworkModel::kPacket;
    }
    if (tcp.ok() && net.model() == "flow" && !hilosim::FlowModelBeta(*tcp))
    {
        // Not silently Reno: the flow model knows only loss-based windows cut by a fixed factor.
        Error(n, "tcp",
              "the flow network model cannot model \"" + net.tcp() +
                  "\" (its window follows rate, delay or window-size rules the model does not "
                  "have); allowed with network.model \"flow\": " +
                  Join(hilosim::FlowModelVariants()) + " (or network.model: \"packet\")");
    }
    out->slow_start_after_idle = !net.has_slow_start_after_idle() || net.slow_start_after_idle();
    out->tcp_buffer = net.tcp_buffer();
    if (net.tcp_buffer() != "auto")
    {
        auto bytes = hilosim::ParseBytes(net.tcp_buffer());
        if (!bytes.ok())
        {
            Error(n, "tcp_buffer",
                  bytes.status().message() + "; allowed: \"auto\" or a size such as \"6MiB\"");
        }
        else if (*bytes < kMinTcpBufferBytes || *bytes > kMaxTcpBufferBytes)
        {
            Error(n, "tcp_buffer",
                  "must be \"auto\" or a size in [16KiB, 256MiB], got \"" + net.tcp_buffer() +
                      "\" (" + std::to_string(*bytes) + " bytes)");
        }
        else
        {
            out->tcp_buffer_bytes = *bytes;
        }
    }
    CheckLinkFields(n.Child("worker_link"), net.worker_link());
    const bool flow = net.model() == "flow";
    if (flow)
        WarnFlowQueue(n.Child("worker_link"), net.worker_link());
    if (net.has_learner_uplink())
    {
        const Node up = n.Child("learner_uplink");
        if (flow)
            WarnFlowQueue(up, net.learner_uplink());
        if (CheckLinkFields(up, net.learner_uplink()))
        {
            if (net.learner_uplink().bandwidth().empty())
                Error(up, "bandwidth",
                      "missing: the learner uplink needs a bandwidth (e.g. "
                      "\"1Gbps\"); remove learner_uplink for none");
            else
                out->learner_uplink = ToLinkSpec(net.learner_uplink());
        }
    }
    if (net.topology() == "relay")
    {
        Choice(n, "relay_forwarding", net.relay_forwarding(), kRelayForwarding, "forwarding");
        out->relay_store_and_forward = net.relay_forwarding() == "store_and_forward";
        if (net.model() == "flow" && net.relay_forwarding() == "stream")
        {
            // Not silently store-and-forward: the flow model's relays cannot stream (yet).
            Error(n, "relay_forwarding",
                  "the flow network model forwards whole updates only; set relay_forwarding: "
                  "\"store_and_forward\" (or network.model: \"packet\" for streaming relays)");
        }
    }
    else if (!net.relay_forwarding().empty())
    {
        Error(n, "relay_forwarding",
              "only topology \"relay\" has relays; this scenario's topology is \"" +
                  net.topology() + "\" (remove relay_forwarding)");
    }
    const bool star = net.topology() == "star";
    if (star && net.regions_size() > 0)
    {
        Error(n, "regions", 0,
              "regions are used only by topology \"regions\" or \"relay\"; this scenario's "
              "topology is \"star\"");
    }
    if (!star && Contains(kTopologies, net.topology()) && net.regions_size() == 0)
    {
        Error(n, "topology",
              "topology \"" + net.topology() +
                  "\" needs at least one network.regions entry { name wan lan }");
    }
    std::map<std::string, int> seen;
    for (int i = 0; i < net.regions_size(); ++i)
    {
        const Region& r = net.regions(i);
        const Node rn = n.Child("regions", i);
        if (Identifier(rn, "name", -1, r.name()) && !seen.emplace(r.name(), i).second)
        {
            Error(rn, "name",
                  "duplicate region name \"" + r.name() + "\" (also regions[" +
                      std::to_string(seen[r.name()]) + "])");
        }
        const Node wan = rn.Child("wan");
        bool ok = CheckLinkFields(wan, r.wan());
        if (r.wan().bandwidth().empty())
        {
            Error(wan, "bandwidth",
                  "missing: each region's shared WAN link needs a bandwidth "
                  "(e.g. \"1Gbps\")");
            ok = false;
        }
        ok &= CheckLinkFields(rn.Child("lan"), r.lan());
        if (flow)
        {
            WarnFlowQueue(wan, r.wan());
            WarnFlowQueue(rn.Child("lan"), r.lan());
        }
        if (ok)
        {
            Link lan = net.worker_link();
            lan.MergeFrom(r.lan());
            out->regions.push_back({r.name(), ToLinkSpec(r.wan()), ToLinkSpec(lan)});
        }
    }
}

void
Checker::WarnFlowQueue(const Node& n, const Link& link)
{
    if (!link.queue().empty() && link.queue() != "fifo")
    {
        Warn(n, "queue",
             "ignored by network.model \"flow\", which has no queues (no queueing delay, no "
             "drops, no AQM); use network.model \"packet\" to model \"" +
                 link.queue() + "\"");
    }
    if (link.has_queue_packets() && link.queue_packets() != 1000)
    {
        Warn(n, "queue_packets",
             "network.model \"flow\" has no queues: it only bounds the automatic TCP window "
             "(BDP + half the queue) and how far a window may wait past its fair share, "
             "never drops packets");
    }
}

} // namespace scenario_check
} // namespace hilosim

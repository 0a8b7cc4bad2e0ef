#include "sim/drivers/process/relay-node.h"

#include "sim/drivers/process/node-host.h"
#include "sim/drivers/process/process-support.h"
#include "sim/roles/peer-ids.h"
#include "sim/roles/relay-role.h"
#include "sim/roles/role-messages.h"

#include <algorithm>

namespace hilosim
{

int
RunRelay(const NodeOptions& o, ArmSetup& setup, std::ostream& err)
{
    const ResolvedScenario& sc = setup.loaded.resolved;
    if (sc.network.topology != TopologyKind::kRelay)
    {
        err << "hilo-node relay: the scenario's topology is "
            << TopologyKindName(sc.network.topology) << ", not relay\n";
        return kExitBadInput;
    }
    if (o.index >= sc.network.regions.size())
    {
        err << "hilo-node relay: --index " << o.index << " is out of range; the scenario has "
            << sc.network.regions.size() << " regions\n";
        return kExitBadInput;
    }
    const std::string forwarding = UnsupportedRelayForwarding(sc);
    if (!forwarding.empty())
    {
        err << "hilo-node relay: " << o.scenario << ": " << forwarding << "\n";
        return kExitBadInput;
    }
    std::string host, learner_host;
    uint16_t listen_port = 0, learner_port = 0;
    if (!SplitHostPort(o.listen, &host, &listen_port) ||
        !SplitHostPort(o.connect, &learner_host, &learner_port) || learner_port == 0)
    {
        err << "hilo-node relay: needs --listen HOST:PORT and --connect LEARNER_HOST:PORT\n";
        return kExitBadInput;
    }
    if (!ListenIsSafe("relay", host, o, setup, err))
        return kExitBadInput;
    std::vector<uint32_t> region_workers;
    for (uint32_t t = 0; t < setup.order.size(); ++t)
    {
        if (sc.workers[setup.order[t]].region_index == static_cast<int32_t>(o.index))
            region_workers.push_back(WorkerPeerId(t));
    }
    const std::string label = "relay " + std::to_string(o.index);
    std::unique_ptr<RelayRole> role; // outlives the node: the transport's callbacks use it
    NodeHost node(label, RelayPeerId(o.index), o, setup, err);
    // The region's workers; nobody else.
    node.options().accept_peer = [&region_workers](uint32_t id)
    { return std::find(region_workers.begin(), region_workers.end(), id) != region_workers.end(); };
    // The run is over once the learner is gone after the last version, and so are the region's
    // workers (they leave when the learner closes at the end). A learner gone before the last
    // version (killed, about to be restarted) is dialled again after the role's backoff, whether
    // or not any of the region's workers is connected.
    bool learner_seen = false; // a dial that never connected is no sign of the end
    bool learner_gone = false;
    node.on_connected = [&](uint32_t peer)
    {
        if (peer == kLearnerPeerId)
        {
            learner_seen = true;
            learner_gone = false;
        }
    };
    node.on_closed = [&](uint32_t peer, bool)
    {
        if (peer == kLearnerPeerId)
            learner_gone = learner_seen;
        for (uint32_t w : region_workers)
        {
            if (node.transport().IsConnected(w))
                return false;
        }
        if (!learner_gone || !role->HoldsLastVersion())
            return false;
        node.loop().Finish(kExitOk, "");
        return true;
    };
    node.on_authentication_failed = [&](uint32_t, const std::string& why)
    { node.loop().Finish(kExitRuntime, "authentication failed with the learner: " + why); };
    node.Open([]() { return std::string("relay failed"); });
    RelayRoleOptions ropt;
    ropt.learner_peer = kLearnerPeerId; // updates come from the learner only
    ropt.restarted = o.rejoin;
    ropt.last_version = setup.context->steps;
    role = std::make_unique<RelayRole>(&node.port(), region_workers, RelayHooks{},
                                       RelayForwarding::kStoreAndForward, ropt);
    // The role hears every connection and close: a worker that reconnects gets the latest update,
    // and the learner is dialled again after the role's backoff.
    node.Route(
        role.get(), []() { return true; },
        [](uint32_t peer, const RoleMessage& m)
        { return peer == kLearnerPeerId && m.type == kUpdate; });
    uint16_t bound = 0;
    const int listening = node.Listen(label, host, listen_port, o.port_file, err, &bound);
    if (listening != kExitOk)
        return listening;
    node.transport().Connect(kLearnerPeerId, learner_host, learner_port);
    if (!node.Ready(o.sync_start, bound))
        return kExitRuntime;
    return node.Run([&]() { return "no update from the learner at " + o.connect; });
}

} // namespace hilosim

#include "sim/drivers/process/learner-node.h"

#include "sim/drivers/process/learner-wiring.h"
#include "sim/drivers/process/node-host.h"
#include "sim/drivers/process/process-faults.h"
#include "sim/roles/learner-role.h"
#include "sim/roles/peer-ids.h"

#include <unistd.h>

namespace hilosim
{

int
RunLearner(const NodeOptions& o, ArmSetup& setup, std::ostream& err)
{
    std::string host;
    uint16_t listen_port = 0;
    if (!SplitHostPort(o.listen, &host, &listen_port))
    {
        err << "hilo-node learner: --listen must be HOST:PORT, got \"" << o.listen << "\"\n";
        return kExitBadInput;
    }
    if (!ListenIsSafe("learner", host, o, setup, err))
        return kExitBadInput;
    if (o.restore && o.checkpoint.empty())
    {
        err << "hilo-node learner: --restore needs --checkpoint FILE (the file to start from)\n";
        return kExitBadInput;
    }
    bool ok = true;
    auto events = OpenEvents(o, err, &ok);
    if (!ok)
        return kExitBadInput;
    const ResolvedScenario& sc = setup.loaded.resolved;
    const uint32_t workers = setup.context->workers;
    std::vector<uint32_t> update_peers;
    if (sc.network.topology == TopologyKind::kRelay)
    {
        for (uint32_t r = 0; r < sc.network.regions.size(); ++r)
            update_peers.push_back(RelayPeerId(r));
    }
    else
    {
        for (uint32_t w = 0; w < workers; ++w)
            update_peers.push_back(WorkerPeerId(w));
    }

    std::unique_ptr<LearnerRole> role; // outlives the node: the transport's callbacks use it
    NodeHost node("learner", kLearnerPeerId, o, setup, err);
    NodeLoop& loop = node.loop();
    // The scenario's workers, and its relays in a relay topology; nobody else.
    const uint32_t relays = sc.network.topology == TopologyKind::kRelay
                                ? static_cast<uint32_t>(sc.network.regions.size())
                                : 0;
    node.options().accept_peer = [workers, relays](uint32_t id)
    { return id < workers || (IsRelayPeerId(id) && id - kRelayPeerIdBase < relays); };
    const ProcessFaults faults(sc);
    LearnerNodeActions actions;
    actions.progress = [&loop]() { loop.Progress(); };
    actions.log = [&loop](const std::string& line) { loop.Log(line); };
    actions.disconnect = [&node](uint32_t peer, const std::string& why)
    { node.transport().Disconnect(peer, why); };
    actions.finish = [&loop](int code, const std::string& message) { loop.Finish(code, message); };
    LearnerWiring wiring(workers, faults.late(), faults.gone(), events.get(), std::move(actions));
    node.on_closed = [&wiring](uint32_t peer, bool)
    {
        wiring.PeerClosed(peer);
        return false; // the role hears of it too
    };
    node.Open([&]() { return role->failure().ToString(); });
    role = std::make_unique<LearnerRole>(setup.context, &node.port(), update_peers,
                                         hilo::PublisherOptions{}, wiring.Hooks(),
                                         wiring.RoleOptions(o.checkpoint, o.restore));
    wiring.SetRole(role.get());
    node.Route(role.get(), [&]() { return role->started(); });
    uint16_t bound = 0;
    const int listening =
        node.Listen("hilo-node learner", host, listen_port, o.port_file, err, &bound);
    if (listening != kExitOk)
        return listening;
    if (events)
        events->Process("learner", 0, getpid());
    if (!node.Ready(o.sync_start, bound))
        return kExitRuntime;
    node.StartAtEpoch(role.get(), /*late_is_expected=*/o.restore);
    return node.Run(
        [&]()
        {
            if (!role->started())
                return std::string("not started");
            const uint64_t v = role->publisher().version();
            if (v < setup.context->steps)
            {
                std::vector<uint32_t> missing;
                for (uint32_t w = 0; w < workers; ++w)
                {
                    if (!node.transport().IsConnected(WorkerPeerId(w)))
                        missing.push_back(w);
                }
                return "at version " + std::to_string(v) + ", waiting for trajectories of round " +
                       std::to_string(v + 1) + " (workers not connected: " + ListIds(missing) + ")";
            }
            std::vector<uint32_t> missing;
            for (uint32_t w = 0; w < workers; ++w)
            {
                if (role->done_workers().count(w) == 0)
                    missing.push_back(w);
            }
            return "published the last version; waiting for workers " + ListIds(missing) +
                   " to hold it";
        });
}

} // namespace hilosim

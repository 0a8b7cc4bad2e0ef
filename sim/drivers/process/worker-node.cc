#include "sim/drivers/process/worker-node.h"

#include "sim/drivers/process/node-host.h"
#include "sim/roles/peer-ids.h"
#include "sim/roles/worker-role.h"

#include <boost/asio/steady_timer.hpp>

#include <unistd.h>

namespace hilosim
{

int
RunWorker(const NodeOptions& o, ArmSetup& setup, std::ostream& err)
{
    const ResolvedScenario& sc = setup.loaded.resolved;
    const uint32_t workers = setup.context->workers;
    if (o.index >= workers)
    {
        err << "hilo-node worker: --index " << o.index << " is out of range; the scenario has "
            << workers << " workers (0 to " << workers - 1 << ")\n";
        return kExitBadInput;
    }
    std::string learner_host, relay_host;
    uint16_t learner_port = 0, relay_port = 0;
    if (!SplitHostPort(o.connect, &learner_host, &learner_port) || learner_port == 0)
    {
        err << "hilo-node worker: --connect must be the learner's HOST:PORT, got \"" << o.connect
            << "\"\n";
        return kExitBadInput;
    }
    const bool relayed = sc.network.topology == TopologyKind::kRelay;
    if (relayed != !o.relay.empty() ||
        (relayed && (!SplitHostPort(o.relay, &relay_host, &relay_port) || relay_port == 0)))
    {
        err << "hilo-node worker: "
            << (relayed ? "a relay topology needs --relay HOST:PORT (its region's relay)"
                        : "--relay is only for relay topologies")
            << "\n";
        return kExitBadInput;
    }
    bool ok = true;
    auto events = OpenEvents(o, err, &ok);
    if (!ok)
        return kExitBadInput;

    const std::string label = "worker " + std::to_string(o.index);
    std::unique_ptr<WorkerRole> role; // outlives the node: the transport's callbacks use it
    NodeHost node(label, WorkerPeerId(o.index), o, setup, err);
    NodeLoop& loop = node.loop();
    bool done_sent = false;
    bool ever_connected = false;
    node.on_connected = [&](uint32_t peer)
    {
        if (peer == kLearnerPeerId)
            ever_connected = true;
    };
    node.on_closed = [&](uint32_t peer, bool)
    {
        if (peer != kLearnerPeerId || !done_sent)
            return false;
        loop.Finish(kExitOk, ""); // the learner ends the run once every worker is done
        return true;
    };
    // A listener that fails its proof may be a process that took the port while the learner
    // restarts: the role redials with its backoff (the watchdog bounds the wait).
    node.on_authentication_failed = [&](uint32_t peer, const std::string&)
    {
        loop.Log(std::string("the ") + (peer == kLearnerPeerId ? "learner" : "relay") +
                 " did not prove the key; dialling again after the backoff");
    };
    node.Open([&]() { return role->failure().ToString(); });
    WorkerHooks hooks;
    hooks.rollout_done = [&](const RolloutEvent& e)
    {
        loop.Progress();
        if (events)
            events->Rollout(e);
    };
    hooks.applied = [&](const ApplyEvent& e)
    {
        loop.Progress();
        if (events)
            events->Apply(e);
    };
    // Only a kDone that left (the last version reached with its hash checked) lets the learner's
    // close end this worker with success.
    hooks.done_sent = [&](uint32_t, uint64_t) { done_sent = true; };
    hooks.hash_mismatch = [&](uint32_t worker, uint64_t version)
    {
        if (events)
            events->Mismatch(worker, version);
    };
    hooks.resync = [&](uint32_t worker, uint64_t from)
    {
        if (events)
            events->Resync(worker, from);
    };
    hooks.caught_up = [&](const CatchUpEvent& e)
    {
        loop.Progress();
        if (events)
            events->CatchUp(e);
    };
    WorkerRoleOptions wopt;
    wopt.announce_done = true;
    wopt.rejoining = o.rejoin;
    role = std::make_unique<WorkerRole>(setup.context, &node.port(), o.index, kLearnerPeerId, wopt,
                                        std::move(hooks));
    node.Route(role.get(), [&]() { return role->started(); });
    if (events)
        events->Process("worker", o.index, getpid());
    node.transport().Connect(kLearnerPeerId, learner_host, learner_port);
    if (relayed)
    {
        const int32_t region = sc.workers[setup.order[o.index]].region_index;
        node.transport().Connect(RelayPeerId(static_cast<uint32_t>(region)), relay_host,
                                 relay_port);
    }
    if (!node.Ready(o.sync_start, 0))
        return kExitRuntime;
    node.StartAtEpoch(role.get(), /*late_is_expected=*/o.rejoin);
    // Fault injection: replays that diverge after the given modelled times.
    std::vector<std::unique_ptr<boost::asio::steady_timer>> diverge;
    for (double at : o.diverge_at_s)
    {
        diverge.push_back(std::make_unique<boost::asio::steady_timer>(
            loop.io(), loop.epoch() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::duration<double>(at))));
        diverge.back()->async_wait(
            [&](const boost::system::error_code& ec)
            {
                if (!ec && role->started())
                    role->DivergeNextReplay();
            });
    }
    return node.Run(
        [&]()
        {
            if (!node.transport().IsConnected(kLearnerPeerId))
            {
                return std::string(ever_connected ? "lost" : "never reached") + " the learner at " +
                       o.connect;
            }
            if (!role->started())
                return std::string("not started");
            return "at version " + std::to_string(role->replica().version()) +
                   ", waiting for updates from the learner";
        });
}

} // namespace hilosim

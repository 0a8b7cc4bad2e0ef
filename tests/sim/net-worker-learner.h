// The setup of the TCP tests: one worker and the learner (peer id 1000, listening on port 7000)
// joined by the links of a TopologySpec, a MessageEndpoint on each, the worker connected with
// socket options made for the learner's path to it, and messages from the worker whose arrival
// times at the learner are recorded.
#ifndef HILO_TESTS_SIM_NET_WORKER_LEARNER_H
#define HILO_TESTS_SIM_NET_WORKER_LEARNER_H

#include "sim/net/message-endpoint.h"
#include "sim/net/socket-options.h"
#include "sim/net/topology-builder.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hilosim::testing
{

class WorkerLearner
{
  public:
    static constexpr uint32_t kLearnerId = 1000;
    static constexpr uint16_t kPort = 7000;

    /// `optionsFor` makes the connection's socket options from the learner's path to worker 0.
    WorkerLearner(const TopologySpec& spec,
                  const std::function<SocketOptions(const PathInfo&)>& optionsFor)
    {
        auto built = TopologyBuilder::Build(spec);
        EXPECT_TRUE(built.ok());
        m_topo.emplace(std::move(*built));
        const SocketOptions options = optionsFor(m_topo->GetLearnerPathTo(0));
        m_learner = ns3::CreateObject<MessageEndpoint>();
        m_learner->SetAttribute("LocalId", ns3::UintegerValue(kLearnerId));
        m_learner->Install(m_topo->GetLearner());
        m_worker = ns3::CreateObject<MessageEndpoint>();
        m_worker->Install(m_topo->GetWorker(0));
        m_learner->Listen(kPort, options);
        m_worker->Connect(kLearnerId, m_topo->GetLearnerAddressFor(0), kPort, options);
        m_learner->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [this](uint32_t, const Message& m)
            {
                for (auto& [payload, arrivedS] : m_watched)
                {
                    if (m.payload == *payload)
                        *arrivedS = ns3::Simulator::Now().GetSeconds();
                }
            }));
    }

    Topology& GetTopology() { return *m_topo; }

    /// Sends `payload` from the worker `atS` seconds into the run; its arrival time at the
    /// learner goes to *arrivedS (left alone if it never arrives).
    void SendAt(double atS, std::shared_ptr<const std::string> payload, double* arrivedS)
    {
        m_watched.emplace_back(payload, arrivedS);
        ns3::Simulator::Schedule(
            ns3::Seconds(atS), [this, payload]()
            { EXPECT_TRUE(m_worker->Send(kLearnerId, 1, payload, payload->size()).ok()); });
    }

  private:
    std::optional<Topology> m_topo;
    ns3::Ptr<MessageEndpoint> m_learner;
    ns3::Ptr<MessageEndpoint> m_worker;
    std::vector<std::pair<std::shared_ptr<const std::string>, double*>> m_watched;
};

} // namespace hilosim::testing

#endif // HILO_TESTS_SIM_NET_WORKER_LEARNER_H

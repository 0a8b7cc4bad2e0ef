#include "sim/drivers/emulation/emulated-links.h"

#include "sim/drivers/emulation/tap-inlet.h"
#include "sim/net/topology-builder.h"
#include "sim/run/arm-context-builder.h"

#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/global-value.h"
#include "ns3/ipv4-address.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/string.h"
#include "ns3/tap-bridge-helper.h"
#include "ns3/tap-bridge.h"

namespace hilosim
{

EmulatedLinks::EmulatedLinks(Topology topology, NetworkPlan plan)
  : m_topology(std::move(topology))
  , m_plan(std::move(plan))
{
}

hilo::StatusOr<std::unique_ptr<EmulatedLinks>>
EmulatedLinks::Build(const ResolvedScenario& scenario, const std::string& tag)
{
    ns3::StringValue impl;
    ns3::GlobalValue::GetValueByName("SimulatorImplementationType", impl);
    ns3::BooleanValue checksums;
    ns3::GlobalValue::GetValueByName("ChecksumEnabled", checksums);
    if (impl.Get() != "ns3::RealtimeSimulatorImpl" || !checksums.Get())
    {
        return hilo::Status::Internal(
            "EmulatedLinks::Build: needs the real-time simulator with checksums enabled");
    }
    // The loss models draw from the same streams as in the simulator
    // (sim/drivers/ns3/arm-runner.cc).
    ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(scenario.seed % 0xfffffffeu) + 1);
    ns3::RngSeedManager::SetRun(1);
    const TopologySpec spec = ScenarioTopologySpec(scenario);
    auto topology = TopologyBuilder::Build(spec);
    if (!topology.ok())
    {
        return topology.status();
    }
    NetworkPlan plan = PlanNetwork(*topology, spec, tag);

    auto stand_in = ns3::CreateObject<ns3::Node>(); // no IPv4 stack: see tap-inlet.h
    const auto& links = topology->GetLinks();
    auto attach = [&](ns3::Ptr<ns3::Node> ghost, const PlannedHost& host)
    {
        for (const PlannedTap& tap : host.taps)
        {
            const InstalledLink& link = links[tap.link];
            auto inlet = ns3::CreateObject<TapInlet>();
            inlet->Setup(tap.side_a ? ns3::Ptr<ns3::NetDevice>(link.device_a)
                                    : ns3::Ptr<ns3::NetDevice>(link.device_b),
                         stand_in);
            ns3::TapBridgeHelper bridge;
            bridge.SetAttribute("Mode", ns3::EnumValue(ns3::TapBridge::CONFIGURE_LOCAL));
            bridge.SetAttribute("DeviceName", ns3::StringValue(tap.name));
            bridge.SetAttribute("IpAddress",
                                ns3::Ipv4AddressValue(ns3::Ipv4Address(tap.address.c_str())));
            bridge.SetAttribute("Netmask", ns3::Ipv4MaskValue(ns3::Ipv4Mask(
                                               ("/" + std::to_string(tap.prefix_length)).c_str())));
            bridge.Install(ghost, inlet);
        }
    };
    for (const PlannedHost& host : plan.hosts)
    {
        switch (host.role)
        {
            case NodeRole::kLearner:
                attach(topology->GetLearner(), host);
                break;
            case NodeRole::kWorker:
                attach(topology->GetWorker(host.index), host);
                break;
            case NodeRole::kRelay:
                attach(topology->GetRelay(host.index), host);
                break;
        }
    }
    return std::unique_ptr<EmulatedLinks>(new EmulatedLinks(std::move(*topology), std::move(plan)));
}

ns3::NetDeviceContainer
EmulatedLinks::LinkDevices() const
{
    ns3::NetDeviceContainer devices;
    for (const InstalledLink& link : m_topology.GetLinks())
    {
        devices.Add(link.device_a);
        devices.Add(link.device_b);
    }
    return devices;
}

} // namespace hilosim

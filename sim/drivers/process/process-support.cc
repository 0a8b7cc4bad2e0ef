#include "sim/drivers/process/process-support.h"

namespace hilosim
{

std::string
UnsupportedRelayForwarding(const ResolvedScenario& scenario)
{
    if (scenario.network.topology != TopologyKind::kRelay ||
        scenario.network.relay_store_and_forward)
    {
        return "";
    }
    return "network.relay_forwarding: \"stream\" (the default for relay topologies) forwards an "
           "update while it arrives, which a process relay cannot: hilo-node relays store and "
           "forward whole updates. Set network.relay_forwarding: \"store_and_forward\" (or "
           "--set network.relay_forwarding=store_and_forward) to run it as processes";
}

} // namespace hilosim

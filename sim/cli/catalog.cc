#include "sim/cli/catalog.h"

namespace hilosim
{

std::vector<std::pair<std::string, std::string>>
KnownNetworkModels()
{
    return {
        {"packet",
         "ns-3 TCP segment by segment (default). Queues, drop-tail and random loss, congestion "
         "control dynamics and their tails are simulated, not modelled. Cost grows with the "
         "packets and the windows in flight: minutes for full-adapter sync of a 7B model to a "
         "handful of workers, hours beyond. Choose it for lossy or contended links, tail "
         "latencies, and to check a flow-model result."},
        {"flow",
         "Each message a flow on the same routes: max-min fair rates re-shared whenever a flow "
         "starts or ends, TCP handshake, slow start, window limit, header overhead, and "
         "Padhye's loss formula. Seconds instead of minutes, whatever the bytes; within 5% of "
         "packet on update-latency p50 for clean links and moderate sharing "
         "(results/sim/flow-vs-packet.md). Choose it for scale (many workers, large adapters, "
         "fast links) and sweeps; it smooths tails and random loss into expectations."},
    };
}

ScenarioCatalog
CurrentCatalog()
{
    ScenarioCatalog c;
    for (const auto& [name, description] : KnownGpus())
        c.gpus.push_back(name);
    for (const auto& [name, description] : KnownLlms())
        c.llms.push_back(name);
    return c;
}

} // namespace hilosim

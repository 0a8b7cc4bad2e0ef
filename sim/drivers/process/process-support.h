// What a scenario may ask that its processes cannot do, whatever the network: a sentence naming
// the field, checked before any process starts (hilo-emu and hilo-node exit 2 with it). Faults are
// ProcessFaults::Unsupported's (process-faults.h), since they depend on the network.
#ifndef HILOSIM_DRIVERS_PROCESS_PROCESS_SUPPORT_H
#define HILOSIM_DRIVERS_PROCESS_PROCESS_SUPPORT_H

#include "sim/scenario/resolved-scenario.h"

#include <string>

namespace hilosim
{

/// A relay topology whose network.relay_forwarding is "stream" (the default for relay
/// topologies): a hilo-node relay only stores and forwards (its transport hands a message over
/// whole), so streaming would be quietly replaced by another relay than the one asked for. The
/// sentence names the field and the value that runs; empty when processes can run the scenario.
std::string UnsupportedRelayForwarding(const ResolvedScenario& scenario);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_PROCESS_SUPPORT_H

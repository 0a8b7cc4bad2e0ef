// Pcap traces of links, for Wireshark or tcpdump -r: like ns-3's PointToPointHelper::EnablePcap,
// each end of a link gets a file of every frame its device sends and receives (PPP link type,
// simulated-time timestamps). Virtual padding bytes are written as zeros, so a file holds every
// byte that crossed the link unless `snapLen` cuts each record short (e.g. 128 keeps the
// IP and TCP headers and the start of the data).
#ifndef HILO_SIM_NET_LINK_PCAP_H
#define HILO_SIM_NET_LINK_PCAP_H

#include "sim/net/link-helper.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hilosim
{

/// The file name of one end of `link`: its name with spaces as '-', then "-a.pcap" for the end
/// towards the learner (InstalledLink::device_a) or "-b.pcap" for the other: "worker-3-a.pcap",
/// "region-eu-wan-b.pcap", "uplink-a.pcap".
std::string LinkPcapFileName(const InstalledLink& link, bool a_end);

/// Creates `dir` and traces both ends of every link into it. InvalidArgument when `dir` cannot
/// be created or written. Files are complete once the simulation is destroyed.
/// REQUIRES: snapLen >= 1; called before Simulator::Run.
hilo::Status EnableLinkPcap(const std::vector<InstalledLink>& links, const std::string& dir,
                            uint32_t snapLen);

} // namespace hilosim

#endif // HILO_SIM_NET_LINK_PCAP_H

#include "sim/net/link-pcap.h"

#include "ns3/point-to-point-net-device.h"
#include "ns3/trace-helper.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace hilosim
{

std::string
LinkPcapFileName(const InstalledLink& link, bool a_end)
{
    std::string name = link.name;
    std::replace(name.begin(), name.end(), ' ', '-');
    return name + (a_end ? "-a.pcap" : "-b.pcap");
}

hilo::Status
EnableLinkPcap(const std::vector<InstalledLink>& links, const std::string& dir, uint32_t snapLen)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::filesystem::path probe = std::filesystem::path(dir) / ".pcap-write-probe";
    if (ec || !std::ofstream(probe))
    {
        return hilo::Status::InvalidArgument("cannot write pcap files to " + dir +
                                             (ec ? ": " + ec.message() : std::string()));
    }
    std::filesystem::remove(probe, ec);
    ns3::PcapHelper pcap;
    for (const InstalledLink& link : links)
    {
        for (bool a_end : {true, false})
        {
            const std::string path =
                (std::filesystem::path(dir) / LinkPcapFileName(link, a_end)).string();
            ns3::Ptr<ns3::PcapFileWrapper> file =
                pcap.CreateFile(path, std::ios::out, ns3::PcapHelper::DLT_PPP, snapLen);
            pcap.HookDefaultSink<ns3::PointToPointNetDevice>(a_end ? link.device_a : link.device_b,
                                                             "PromiscSniffer", file);
        }
    }
    return hilo::Status::Ok();
}

} // namespace hilosim

#include "sim/drivers/process/tcp-info.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace hilosim
{

std::optional<TcpTraceSample>
ReadTcpInfo(int fd, uint32_t peer)
{
    struct tcp_info info = {};
    socklen_t len = sizeof(info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_total_retrans) + sizeof(info.tcpi_total_retrans))
    {
        return std::nullopt;
    }
    TcpTraceSample s;
    s.peer = peer;
    const uint64_t mss = info.tcpi_snd_mss;
    s.cwnd_bytes = info.tcpi_snd_cwnd * mss;
    // Linux starts snd_ssthresh at TCP_INFINITE_SSTHRESH (0x7fffffff segments): none yet.
    if (info.tcpi_snd_ssthresh < 0x7fffffffu)
        s.ssthresh_bytes = info.tcpi_snd_ssthresh * mss;
    s.in_slow_start = info.tcpi_snd_cwnd < info.tcpi_snd_ssthresh;
    if (info.tcpi_rtt > 0)
        s.srtt_s = info.tcpi_rtt * 1e-6;
    s.retransmits = info.tcpi_total_retrans;
    // Fields newer kernels added at the end: only when the kernel filled them.
    auto has = [len](size_t end) { return len >= end; };
    if (has(offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(info.tcpi_bytes_acked)))
        s.bytes_acked = info.tcpi_bytes_acked;
    if (has(offsetof(struct tcp_info, tcpi_min_rtt) + sizeof(info.tcpi_min_rtt)) &&
        info.tcpi_min_rtt != ~0u && info.tcpi_min_rtt > 0)
        s.min_rtt_s = info.tcpi_min_rtt * 1e-6;
    if (has(offsetof(struct tcp_info, tcpi_delivery_rate) + sizeof(info.tcpi_delivery_rate)))
        s.delivery_rate_bps = static_cast<double>(info.tcpi_delivery_rate) * 8;
    return s;
}

std::map<std::string, uint64_t>
ReadHyStartCounters()
{
    // Pairs of lines: "TcpExt: NAME NAME ...", then "TcpExt: VALUE VALUE ...".
    std::map<std::string, uint64_t> counters;
    std::ifstream in("/proc/self/net/netstat");
    std::string names, values;
    while (std::getline(in, names) && std::getline(in, values))
    {
        if (names.rfind("TcpExt:", 0) != 0)
            continue;
        std::istringstream n(names), v(values);
        std::string name, value;
        n >> name; // "TcpExt:"
        v >> value;
        while (n >> name && v >> value)
        {
            if (name.rfind("TCPHystart", 0) == 0)
                counters[name] = std::strtoull(value.c_str(), nullptr, 10);
        }
    }
    return counters;
}

} // namespace hilosim

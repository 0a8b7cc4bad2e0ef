// What the kernel says of a node's TCP, for the TCP trace (sim/net/tcp-trace.h): one socket's
// TCP_INFO as a trace sample, and the HyStart counters of the network namespace the process runs
// in (/proc/self/net/netstat, TcpExt). Kept apart from Boost.Asio, whose <netinet/tcp.h> has an
// older struct tcp_info than the kernel's <linux/tcp.h> used here.
#ifndef HILOSIM_DRIVERS_PROCESS_TCP_INFO_H
#define HILOSIM_DRIVERS_PROCESS_TCP_INFO_H

#include "sim/net/tcp-trace.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace hilosim
{

/// getsockopt(fd, IPPROTO_TCP, TCP_INFO) as a sample towards `peer`: cwnd and ssthresh in bytes
/// (segments x tcpi_snd_mss; ssthresh empty while Linux's is "infinite"), tcpi_rtt and
/// tcpi_min_rtt, tcpi_delivery_rate, tcpi_bytes_acked, tcpi_total_retrans; HyStart's exits are
/// not in TCP_INFO (empty). Empty when the call fails (a socket closing).
std::optional<TcpTraceSample> ReadTcpInfo(int fd, uint32_t peer);

/// The TcpExt counters of /proc/self/net/netstat whose names start with "TCPHystart" (this
/// process's network namespace; all of the host's under hilo-emu --network direct). Empty when
/// the file cannot be read or has none (kernels without HyStart counters).
std::map<std::string, uint64_t> ReadHyStartCounters();

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_TCP_INFO_H

#include "sim/net/socket-options.h"

#include "sim/net/tcp-idle-restart.h"
#include "sim/net/tcp-linux-cubic.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/tcp-bbr.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace hilosim
{

uint32_t
SegmentBytesForMtu(uint32_t mtu)
{
    NS_ABORT_MSG_IF(mtu < 576, "SegmentBytesForMtu: MTU " << mtu << " below the IPv4 minimum");
    return mtu - 20 - 20 - 12;
}

uint32_t
ReceiveBufferFor(uint32_t sendBufferBytes, uint32_t segmentBytes)
{
    const uint64_t bytes = 2 * uint64_t{sendBufferBytes} + 4 * uint64_t{segmentBytes};
    return static_cast<uint32_t>(std::min<uint64_t>(bytes, 0x3FFFFFFF));
}

SocketOptions
SocketOptions::ForPath(const PathInfo& path, ns3::TypeId congestionControl,
                       const BufferSizing& sizing)
{
    SocketOptions o;
    o.congestion_control = congestionControl;
    o.segment_bytes = SegmentBytesForMtu(path.GetMtu());
    uint64_t bytes = sizing.fixed_bytes;
    if (bytes == 0)
    {
        const double bdp = static_cast<double>(path.GetBdpBytes());
        const double wanted = std::ceil(std::min(
            sizing.bdp_multiple * bdp,
            bdp + sizing.queue_fraction * static_cast<double>(path.GetBottleneckQueueBytes())));
        const uint64_t ceiling = std::min(sizing.ceiling_bytes, BufferSizing::kMaxSendBufferBytes);
        const uint64_t floor = std::min<uint64_t>(sizing.floor_bytes, ceiling);
        bytes = std::clamp<uint64_t>(static_cast<uint64_t>(wanted), floor, ceiling);
    }
    bytes = std::min<uint64_t>(bytes, BufferSizing::kMaxSendBufferBytes);
    // Whole segments, as ns-3 examples use.
    const uint64_t segments = (bytes + o.segment_bytes - 1) / o.segment_bytes;
    bytes = segments * o.segment_bytes;
    o.send_buffer_bytes = static_cast<uint32_t>(bytes);
    o.receive_buffer_bytes = ReceiveBufferFor(o.send_buffer_bytes, o.segment_bytes);
    o.window_limited = bytes < path.GetBdpBytes();
    return o;
}

void
SocketOptions::ApplyTo(ns3::Ptr<ns3::Socket> socket) const
{
    auto tcp = ns3::DynamicCast<ns3::TcpSocketBase>(socket);
    NS_ABORT_MSG_IF(!tcp, "SocketOptions::ApplyTo: not a TCP socket");
    ns3::ObjectFactory factory;
    // CUBIC as Linux's: ns-3's TcpCubic with Linux's HyStart (tcp-linux-cubic.h).
    factory.SetTypeId(congestion_control == ns3::TcpCubic::GetTypeId() ? TcpLinuxCubic::GetTypeId()
                                                                       : congestion_control);
    // Not TypeId::IsChildOf: Debian's ns-3 3.37 gives TcpCubic the wrong parent TypeId.
    ns3::Ptr<ns3::TcpCongestionOps> algorithm =
        ns3::DynamicCast<ns3::TcpCongestionOps>(factory.Create());
    NS_ABORT_MSG_IF(!algorithm, "SocketOptions: " << congestion_control.GetName()
                                                  << " is not a TcpCongestionOps");
    // Linux's window rules around it: growth only while cwnd limits, and the restart after idle
    // unless switched off.
    algorithm = ns3::CreateObject<TcpIdleRestart>(algorithm, restart_after_idle);
    tcp->SetAttribute("SegmentSize", ns3::UintegerValue(segment_bytes));
    ApplyBuffersTo(socket);
    tcp->SetCongestionControlAlgorithm(algorithm);
    // SACK on, as Linux (ns-3's default too). The tail loss probe and RACK come with
    // TcpLinuxSocket. A lone segment is acknowledged after Linux's 40 ms (TCP_ATO_MIN, its
    // delayed-ACK timer's usual value) rather than ns-3's 200 ms: that ACK's RTT sample goes into
    // the RTO that decides how often the restart after idle halves cwnd (tcp-idle-restart.h),
    // and 200 ms more of it halved one time fewer than Linux. ns-3's 1 s minimum RTO stays: with
    // Linux's 200 ms a connection under heavy loss (30% corruption, NetFaults tests) stopped
    // sending altogether in ns-3 3.37.
    tcp->SetAttribute("Sack", ns3::BooleanValue(true));
    tcp->SetAttribute("DelAckTimeout", ns3::TimeValue(ns3::MilliSeconds(kDelayedAckMs)));
    // Pacing only where Linux paces: BBR asks for it (sk_pacing_status = SK_PACING_NEEDED, and
    // ns-3's TcpBbr needs it too); CUBIC and the other loss-based variants send unpaced, their
    // bursts clocked by ACKs, as Linux does without an fq qdisc. Pacing every sender kept slow
    // start from ending by HyStart's ACK train (tcp-linux-cubic.h) and spread each window over
    // the round trip, which Linux does not do. A window that leaves at once waits in its host's
    // own egress queue, which never drops it (TcpLinuxSocket::Create; Linux: TCP small queues).
    tcp->SetPacingStatus(congestion_control == ns3::TcpBbr::GetTypeId());
}

SocketOptions
SocketOptions::SafeBuffers() const
{
    SocketOptions safe = *this;
    safe.send_buffer_bytes = std::min(send_buffer_bytes, receive_buffer_bytes);
    safe.receive_buffer_bytes = std::max(
        receive_buffer_bytes, ReceiveBufferFor(safe.send_buffer_bytes, safe.segment_bytes));
    return safe;
}

void
SocketOptions::ApplyBuffersTo(ns3::Ptr<ns3::Socket> socket) const
{
    const SocketOptions safe = SafeBuffers();
    socket->SetAttribute("SndBufSize", ns3::UintegerValue(safe.send_buffer_bytes));
    socket->SetAttribute("RcvBufSize", ns3::UintegerValue(safe.receive_buffer_bytes));
}

std::string
SocketOptions::ToString() const
{
    std::ostringstream out;
    std::string name = congestion_control.GetName();
    if (name.rfind("ns3::", 0) == 0)
    {
        name = name.substr(5);
    }
    out << name << " seg=" << segment_bytes << " snd=" << send_buffer_bytes
        << " rcv=" << receive_buffer_bytes << (window_limited ? " (window-limited)" : "");
    return out.str();
}

} // namespace hilosim

// TCP settings of one message connection, and how they are derived from a path.
//
// The send buffer is what bounds the data in flight (and so the simulation cost); the receive
// buffer is always larger (ReceiveBufferFor), so that the receiver's window never binds. That is
// deliberate: ns-3 3.37's TcpTxBuffer::NextSeg returns an empty segment when the data in the sent
// list equals the peer's window while some of it is SACKed, and TcpSocketBase::SendDataPacket then
// dereferences a null TcpTxItem (crash in TcpRateLinux::SkbSent; fixed in later ns-3 by a window
// check in NextSeg). A window-limited sender with loss hits it within seconds.
//
// Buffers must cover the bandwidth-delay product or TCP is window-limited, but ns-3's per-ACK cost
// grows with the segments in flight (DESIGN.md section 8: 50 MB over 1 Gbps/40 ms took 1.2 s of
// wall time with 1 MB buffers and 17 s with 8 MB; 1.3 s with 8 MB and a 9000-byte MTU). So the
// buffers are a multiple of the BDP, with a floor, a cap in bytes and a cap in segments; the cap in
// segments is what a larger MTU relaxes. When a cap binds, SocketOptions::window_limited says so:
// the simulated throughput is then below the link's.
#ifndef HILO_SIM_NET_SOCKET_OPTIONS_H
#define HILO_SIM_NET_SOCKET_OPTIONS_H

#include "sim/net/topology.h"

#include "ns3/socket.h"
#include "ns3/tcp-cubic.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <string>

namespace hilosim
{

struct BufferSizing
{
    // Window = 1.25 BDP keeps the link busy with headroom for ACK jitter; more only builds a
    // standing queue at the bottleneck and costs simulation time (in-flight segments).
    double bdp_multiple{1.25};
    uint32_t floor_bytes{64 * 1024};      // small-BDP paths still get room for a burst
    uint32_t cap_bytes{32 * 1024 * 1024}; // memory bound per socket buffer
    uint32_t cap_segments{1024};          // bound on simulation cost (segments in flight)
};

struct SocketOptions
{
    ns3::TypeId congestion_control{ns3::TcpCubic::GetTypeId()};
    uint32_t segment_bytes{1448};              // TCP payload per segment (SegmentSize attribute)
    uint32_t send_buffer_bytes{90 * 1448};     // bounds data in flight
    uint32_t receive_buffer_bytes{184 * 1448}; // ReceiveBufferFor(send): never the binding window
    bool window_limited{false};                // a cap kept the buffers below bdp_multiple x BDP
    // Linux's congestion-window restart after idle (net.ipv4.tcp_slow_start_after_idle, on by
    // default there and absent from ns-3): sim/net/tcp-idle-restart.h.
    bool restart_after_idle{true};

    /// Sized for `path`: segment from the path MTU, buffers from its BDP under `sizing`.
    static SocketOptions ForPath(const PathInfo& path, ns3::TypeId congestionControl,
                                 const BufferSizing& sizing = BufferSizing());

    /// Applies to a TCP socket before Connect/Listen (segment size, buffers, congestion control
    /// -- wrapped in TcpIdleRestart with restart_after_idle --, pacing, which is on for every
    /// variant). Buffers may be changed again later; the segment
    /// size may not.
    /// REQUIRES: `socket` is an ns3::TcpSocketBase.
    void ApplyTo(ns3::Ptr<ns3::Socket> socket) const;
    /// Only the buffer sizes (allowed on a connected socket).
    void ApplyBuffersTo(ns3::Ptr<ns3::Socket> socket) const;

    /// "TcpCubic seg=8948 snd=2097152 rcv=2097152" for logs and metadata.
    std::string ToString() const;
};

/// The receive buffer to pair with a send buffer: 2 x send + 4 segments, so the advertised window
/// stays above the sender's buffer even with out-of-order data held (see the file comment).
uint32_t ReceiveBufferFor(uint32_t sendBufferBytes, uint32_t segmentBytes);

/// TCP payload bytes per segment for an IP MTU: MTU - 20 (IPv4) - 20 (TCP) - 12 (timestamp
/// option, on by default in ns-3), so that data segments never need IP fragmentation.
uint32_t SegmentBytesForMtu(uint32_t mtu);

} // namespace hilosim

#endif // HILO_SIM_NET_SOCKET_OPTIONS_H

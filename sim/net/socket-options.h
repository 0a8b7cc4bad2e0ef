// TCP settings of one message connection, and how they are derived from a path.
//
// The receive window never binds: whatever buffers a connection is given, the ones applied to its
// socket (SocketOptions::SafeBuffers) keep the receive buffer at ReceiveBufferFor(send buffer),
// lowering the send buffer to the receive buffer first where a smaller receive buffer was asked
// for, so that the bound on data in flight -- min(send, receive), as in real TCP -- stays the one
// asked for, but the sender's own buffer is what enforces it. The reason is a crash in ns-3 3.37
// under loss. Its root cause (src/internet/model/tcp-tx-buffer.cc, TcpTxBuffer::NextSeg, rule 2):
// with unsent data queued, NextSeg offers new data when `m_sentSize <= rWnd` and returns the range
// [HighData, HighData + min(SMSS, rWnd - m_sentSize)). When the sender has filled the peer's
// window exactly (m_sentSize == rWnd: a receive-window-limited sender) the range is empty, yet
// TcpSocketBase::SendPendingData still asks for it, because it only checks AvailableWindow(),
// which compares the window with the pipe (bytes in flight net of SACKed and lost-marked ones),
// not with m_sentSize: after a loss the pipe is below m_sentSize. SendDataPacket(seq, 0) then gets
// a null TcpTxItem from CopyFromSequence and TcpRateLinux::SkbSent dereferences it (a log of the
// crash: "Sent size: 100000 ... bytesInFlight: 10224", then SendDataPacket(..., 0, ...)). ns-3
// fixed it in 3.41 (`<` instead of `<=`; ns-3 bug 991, "TCP crashes due to sending zero-length
// segment"). The trigger therefore needs loss, unsent data, and a peer window equal to the data
// sent; the window the receiver advertises is its buffer minus the bytes it just released in order
// (ns-3 acknowledges before the application reads), at least receive - send, so a receive buffer
// of 2 x send + 4 segments keeps it above anything the sender can have outstanding.
//
// The send buffer is the window: the most bytes a connection has in flight. It comes from the
// scenario's network.tcp_buffer. "auto" sizes it to bdp_multiple x the path's bandwidth-delay
// product, at most BDP + queue_fraction x the bottleneck queue, within [floor_bytes,
// ceiling_bytes], as on a host tuned for long fat networks (Linux autotuning with raised
// tcp_wmem/tcp_rmem maxima); a fixed size applies to every connection (6 MiB is an untuned Linux
// host's receive-buffer maximum). Either way the receive buffer stays ReceiveBufferFor(send), so
// a small window limits the sender through its own buffer, never through the peer's window. When
// the window is below the path's BDP, throughput is at most window / RTT:
// SocketOptions::window_limited says so, and runs report it.
//
// Large windows cost simulation time in the packet model: ns-3's per-ACK cost grows with the
// segments in flight (50 MB over 1 Gbps/40 ms took 1.2 s of wall time with 1 MB buffers and 17 s
// with 8 MB; 1.3 s with 8 MB and a 9000-byte MTU). There is no hidden cap
// on that: runs whose windows make the packet model too slow are what the flow model is for.
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

/// How long a receiver holds the ACK of a lone segment, milliseconds: Linux's TCP_ATO_MIN.
constexpr int64_t kDelayedAckMs = 40;

struct BufferSizing
{
    // "auto": window = 1.25 BDP keeps the link busy with headroom for ACK jitter; more only builds
    // a standing queue at the bottleneck and costs simulation time (in-flight segments).
    double bdp_multiple{1.25};
    // ... but at most BDP + this fraction of the bottleneck queue: a larger window would overflow
    // the queue by itself, and every transfer would pay drop-tail losses it chose.
    double queue_fraction{0.5};
    uint32_t floor_bytes{64 * 1024};             // small-BDP paths still get room for a burst
    uint32_t ceiling_bytes{kMaxSendBufferBytes}; // largest automatic window
    uint32_t fixed_bytes{0};                     // > 0: this window everywhere, no sizing

    /// The largest send buffer (automatic or fixed): 256 MiB, a 10 Gbps path with a 200 ms RTT.
    /// Its receive buffer (ReceiveBufferFor) stays below ns-3's 1 GiB window-scale limit.
    static constexpr uint32_t kMaxSendBufferBytes = 256u << 20;
};

struct SocketOptions
{
    ns3::TypeId congestion_control{ns3::TcpCubic::GetTypeId()};
    uint32_t segment_bytes{1448};              // TCP payload per segment (SegmentSize attribute)
    uint32_t send_buffer_bytes{90 * 1448};     // bounds data in flight
    uint32_t receive_buffer_bytes{184 * 1448}; // ReceiveBufferFor(send): never the binding window
    bool window_limited{false};                // the send buffer is below the path's BDP
    // Linux's congestion-window restart after idle (net.ipv4.tcp_slow_start_after_idle, on by
    // default there and absent from ns-3): sim/net/tcp-idle-restart.h.
    bool restart_after_idle{true};

    /// Sized for `path`: segment from the path MTU, buffers from its BDP under `sizing` (whole
    /// segments, rounded up).
    static SocketOptions ForPath(const PathInfo& path, ns3::TypeId congestionControl,
                                 const BufferSizing& sizing = BufferSizing());

    /// Applies to a TCP socket before Connect/Listen (segment size, buffers, congestion control
    /// -- wrapped in TcpIdleRestart, its restart on with restart_after_idle --, SACK, Linux's
    /// delayed-ACK timeout, pacing for BBR only). Buffers may be changed again later; the
    /// segment size may not.
    /// REQUIRES: `socket` is an ns3::TcpSocketBase.
    void ApplyTo(ns3::Ptr<ns3::Socket> socket) const;
    /// Only the buffer sizes (allowed on a connected socket). Both apply the SafeBuffers.
    void ApplyBuffersTo(ns3::Ptr<ns3::Socket> socket) const;

    /// These options with buffers the receive window cannot bind (see the file comment): send
    /// lowered to min(send, receive), then receive raised to at least ReceiveBufferFor(send).
    /// The same options when they already are (ForPath's always are).
    SocketOptions SafeBuffers() const;

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

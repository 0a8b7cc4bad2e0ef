// What the flow model knows about one direction of one TCP connection, derived from its route and
// socket options, and the closed forms it rests on. Pure functions: no simulator state.
//
// The model (each quantity mirrors what ns-3's TCP does in the packet model, as configured by
// SocketOptions):
//   - a segment carries mss payload bytes and costs mss + 54 bytes on every link (IPv4 20, TCP 20,
//     timestamp option 12, point-to-point header 2), so goodput = wire rate * mss / (mss + 54);
//   - the base round trip is twice the propagation delay plus, per hop, the serialization of a
//     data segment one way and of an ACK the other;
//   - the window is min(cwnd, send buffer): at most window / RTT of goodput; in slow start each
//     round's window leaves at once (Linux's CUBIC does not pace without an fq qdisc, nor does
//     the packet model), after slow start paced at 1.2x window / RTT (ns-3's PacingCaRatio);
//   - the congestion window starts at 10 segments and grows in slow start by the bytes acked
//     (ns-3 counts bytes in slow start, RFC 3465), i.e. doubles every round trip while it binds;
//   - under random loss p the rate tends to the steady-state throughput of Padhye, Firoiu, Towsley
//     and Kurose, "Modeling TCP Throughput: A Simple Model and its Empirical Validation", SIGCOMM
//     1998 (the closed-form approximation of their full model, which counts triple-duplicate
//     losses and timeouts), in segments per second:
//       B(p) = min(Wmax / RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))
//     with b = 2 segments per ACK (ns-3's delayed ACK count) and T0 = max(1 s, 2 RTT) (ns-3's
//     minimum RTO). Losses are counted in expectation: the first after 1/p segments ends slow
//     start; each loss event multiplies the window by the variant's beta (FlowModelBeta), never
//     below the Padhye window B(p) x RTT and never above the window before the loss.
//   - the model knows only loss-based variants whose window after a loss is a fixed fraction
//     of the window before it and whose slow start is the standard one: CUBIC (beta 0.7),
//     NewReno and Linux Reno (0.5), BIC (0.8) and Scalable (0.875), ns-3's defaults. The others
//     (BBR, Vegas, LEDBAT, ... : rate, delay or window-dependent rules) are refused at
//     validation (FlowModelBeta has no value for them).
// Where this matches ns-3 and where it does not: results/sim/flow-vs-packet.md.
#ifndef HILO_SIM_NET_FLOW_TCP_FLOW_MODEL_H
#define HILO_SIM_NET_FLOW_TCP_FLOW_MODEL_H

#include "sim/net/link-spec.h"
#include "sim/net/socket-options.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

/// Wire bytes of one segment beyond its payload: IPv4 + TCP + timestamp option + PPP header.
constexpr uint32_t kSegmentOverheadBytes = 20 + 20 + 12 + 2;
/// ns-3's TcpSocket::InitialCwnd default, in segments.
constexpr uint32_t kInitialCwndSegments = 10;
/// ns-3's TcpSocketBase::MinRto default, seconds.
constexpr double kMinRtoSeconds = 1.0;
/// ns-3's TcpSocketState PacingCaRatio: pacing rate / (window / RTT) after slow start. Slow
/// start is not paced (Linux's CUBIC without an fq qdisc, as the packet model sends it).
constexpr double kCongestionAvoidancePacing = 1.2;

struct TcpFlowParams
{
    double mss_bytes{1448};    // payload per segment
    double wire_factor{1.0};   // wire bytes per payload byte
    double rtt_s{0};           // base round trip
    double handshake_rtt_s{0}; // round trip of a SYN / SYN-ACK
    double tail_s{0};          // last byte: leaves the sender -> arrives (propagation + hops)
    double window_bytes{0};    // send buffer: most bytes in flight
    double initial_cwnd_bytes{0};
    double loss{0};                // probability that a segment is lost on the path, [0, 1)
    double beta{0.7};              // window kept at a loss event
    bool restart_after_idle{true}; // Linux's slow start after idle (SocketOptions)
    double loss_rate_Bps{std::numeric_limits<double>::infinity()}; // Padhye goodput, bytes/s
};

/// The fraction of its window `congestionControl` keeps at a loss event, as the flow model uses
/// it; none for a variant the flow model cannot model (see the file comment).
std::optional<double> FlowModelBeta(ns3::TypeId congestionControl);

/// The variants FlowModelBeta knows, as scenarios name them ("cubic", "newreno", ...).
std::vector<std::string> FlowModelVariants();

/// Parameters of the direction that crosses `route` in order (sender's link first), with the
/// connection's socket options (segment size, send buffer, congestion control, restart after
/// idle). REQUIRES: FlowModelBeta(options.congestion_control) has a value.
TcpFlowParams TcpFlowParamsFor(const std::vector<const LinkSpec*>& route,
                               const SocketOptions& options);

/// Padhye et al. 1998, the formula in the file comment: steady-state send rate in bytes/s of a TCP
/// flow with segments of `mssBytes`, round trip `rttS`, loss probability `p` > 0, `b` segments
/// acknowledged per ACK, first retransmission timeout `t0S`, and receiver window `wmaxBytes`.
double PadhyeThroughputBytesPerSecond(double mssBytes, double rttS, double p, double b, double t0S,
                                      double wmaxBytes);

/// Closed form of one flow alone on its path from a congestion window of `cwndBytes` in slow
/// start, no loss, as FlowNetwork models it: while the window W = min(cwnd, send buffer) is below
/// the path's goodput `goodputBps` (bytes/s) times RTT, round k sends W_k bytes at the goodput
/// (unpaced) and lasts one RTT, and cwnd_{k+1} = cwnd_k + W_k; once W covers the
/// path the rest goes at the goodput; the last round sends only what is left. Returns seconds
/// from the first byte leaving to the last byte arriving (adds tail_s).
double SlowStartTransferSeconds(const TcpFlowParams& params, double goodputBps, double bytes,
                                double cwndBytes);

} // namespace hilosim

#endif // HILO_SIM_NET_FLOW_TCP_FLOW_MODEL_H

// What the flow model knows about one direction of one TCP connection, derived from its route and
// socket options, and the closed forms it rests on. Pure functions: no simulator state.
//
// The model (each quantity mirrors what ns-3's TCP does in the packet model, as configured by
// SocketOptions):
//   - a segment carries mss payload bytes and costs mss + 54 bytes on every link (IPv4 20, TCP 20,
//     timestamp option 12, point-to-point header 2), so goodput = wire rate * mss / (mss + 54);
//   - the base round trip is twice the propagation delay plus, per hop, the serialization of a
//     data segment one way and of an ACK the other;
//   - the window is min(cwnd, send buffer): at most window / RTT of goodput; each round's window
//     leaves at once, in slow start and after it (Linux's CUBIC does not pace without an fq
//     qdisc, nor does the packet model);
//   - the congestion window starts at 10 segments and grows in slow start by the bytes acked
//     (ns-3 counts bytes in slow start, RFC 3465), i.e. doubles every round trip while it binds;
//   - under random loss p, losses are counted in expectation and their effect on the window is
//     played out round by round (FlowNetwork), with Linux's loss recovery (SACK, RACK and a tail
//     loss probe, RFC 8985, which the packet model has) in mind:
//       * loss events, not losses, cut the window: at most one cut per round trip with a loss,
//         and none in the round of recovery after it, so with W segments per round a cut comes
//         every 1 + 1 / (1 - (1 - p)^W) rounds (LossEventRate: about p / (1 + W p) per segment);
//         the first comes after 1/p segments and ends slow start;
//       * each cut multiplies cwnd by the variant's beta (WindowAfterLoss: Linux's
//         bictcp_recalc_ssthresh, at least two segments, never above cwnd), ssthresh = cwnd;
//       * between cuts, each round that fills the window grows it by the variant's own rule
//         (WindowAfterLossFreeRound): Reno's one segment (AIMD(1, beta) for the others), and for
//         CUBIC the larger of its Reno-friendly region (alpha = 3 (1 - beta) / (1 + beta), RFC
//         9438 section 4.3) and its cubic curve from the last cut's W_max (section 4.2, with
//         Linux's fast convergence), its time t counted in rounds that sent, not in idle time;
//         FlowNetwork keeps the Reno-friendly window for the whole epoch (Linux's tcp_cwnd), so
//         a window a restart after idle took down climbs back to it;
//         Linux grows the window per segment acknowledged, not per ACK, so delayed ACKs do not
//         slow it. (A window held at the long flow's mean window, the closed form below, froze
//         the growth above it, where Linux's curve keeps growing between an update's loss
//         events: results/validation/simulator-rerun.md);
//       * a retransmission timeout, which needs the repair of a loss event lost too (p per
//         event), is left out of the rounds in this, the expected-value mode; it is part of the
//         closed form below.
//     With a seed (FlowNetwork's lossSeed, the scenario's seed in a run), losses are drawn
//     instead: each segment is lost with probability p, independently (the gap to the next lost
//     segment is geometric, drawn from the stream's own seeded generator), so an update sees
//     as many losses as chance gives it, one expected every 1/p segments. A loss after the
//     recovery point of the last cut (the bytes sent when it came) cuts the window as above,
//     when the sender finds it, as Linux enters recovery: RepairDelaySeconds after the segment
//     left, from the window slow start or the variant's curve has grown since (a cut at the
//     segment's departure took up to half of Linux's window in slow start, where most losses
//     fall at 0.1%: results/validation/emulation-notes.md); one before that point, or while a
//     cut is pending, is part of that recovery. Each lost segment holds back the
//     in-order delivery of everything after it until its repair arrives: the repair leaves
//     RepairDelaySeconds after the segment (fast retransmit, RACK, or the tail loss probe's
//     round), and is itself lost with probability p: RACK finds a lost repair a round trip and
//     a reordering window later while three or more segments leave behind it, else it waits
//     out Linux's RTO (LinuxRtoSeconds, doubled per retry); a retransmission timeout sets cwnd
//     to one segment plus what its ACK acknowledges at once, at most the cut's ssthresh. This gives
//     the tails under loss (the p99 of an update) that the expected mode cannot. The long-run rate
//     of that sawtooth has a closed form, LossThroughputBytesPerSecond: the deterministic loss
//     model of RFC 9438 section 5.1 at the event rate pe (an AIMD(alpha, beta) flow averages
//     sqrt(alpha (1 + beta) / (2 (1 - beta) pe)) segments; CUBIC the larger of that and (C (3 +
//     beta) / (4 (1 - beta)))^(1/4) (RTT / pe)^(3/4), C = 0.4), with Linux's RTO (RTT + 200 ms)
//     backed off as in Padhye et al., SIGCOMM 1998 for the timeouts: a reference the rounds come
//     within a few per cent of on a long transfer (tests/sim).
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
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

/// Wire bytes of one segment beyond its payload: IPv4 + TCP + timestamp option + PPP header.
constexpr uint32_t kSegmentOverheadBytes = 20 + 20 + 12 + 2;
/// ns-3's TcpSocket::InitialCwnd default, in segments.
constexpr uint32_t kInitialCwndSegments = 10;
/// Linux's minimum retransmission timeout (TCP_RTO_MIN), seconds, as the packet model sets it.
constexpr double kMinRtoSeconds = 0.2;

struct TcpFlowParams
{
    double mss_bytes{1448};    // payload per segment
    double wire_factor{1.0};   // wire bytes per payload byte
    double rtt_s{0};           // base round trip
    double handshake_rtt_s{0}; // round trip of a SYN / SYN-ACK
    double tail_s{0};          // last byte: leaves the sender -> arrives (propagation + hops)
    double window_bytes{0};    // send buffer: most bytes in flight
    double initial_cwnd_bytes{0};
    double queue_s{0};             // the bottleneck's queue, full, in seconds of its rate
    double loss{0};                // probability that a segment is lost on the path, [0, 1)
    double beta{0.7};              // window kept at a loss event
    bool cubic{true};              // CUBIC's loss response (else AIMD(1, beta))
    bool restart_after_idle{true}; // Linux's slow start after idle (SocketOptions)
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

/// Loss events per segment sent (see the file comment) when each segment is lost with
/// probability `p` in (0, 1) and a round carries `windowSegments` (at least 1 counts).
double LossEventRate(double p, double windowSegments);

/// Segments a window grows by per round trip in congestion avoidance, as the loss response
/// below counts it: Reno's 1, or CUBIC's Reno-friendly 3 (1 - beta) / (1 + beta).
double LossResponseAlpha(double beta, bool cubic);

/// Mean congestion window in segments at `lossEvents` loss events per segment sent and round
/// trip `rttS` of the loss response in the file comment: CUBIC's (`cubic`) or AIMD(1, beta)'s.
double SteadyWindowSegments(double beta, bool cubic, double rttS, double lossEvents);

/// A loss event's cut (Linux's bictcp_recalc_ssthresh, and tcp_reno_ssthresh for the others):
/// cwnd becomes beta x cwnd, at least two segments and never above cwnd; W_max, the plateau of
/// CUBIC's curve, becomes cwnd, or cwnd (1 + beta) / 2 when cwnd is below the previous W_max
/// `wMaxBytes` (fast convergence); K, the seconds the curve takes from the new cwnd back to
/// W_max, is cbrt((W_max - cwnd) / C) in segments (bictcp_update at the epoch's start).
struct LossCut
{
    double cwnd_bytes{0};
    double w_max_bytes{0};
    double k_s{0};
};
LossCut WindowAfterLoss(const TcpFlowParams& params, double cwndBytes, double wMaxBytes);

/// Congestion avoidance's window after one more cwnd-limited round trip without a loss event,
/// `epochS` seconds of sending after the last cut (this round included): the variant's additive
/// increase (LossResponseAlpha segments), and for CUBIC at least its curve one round trip ahead,
/// W_max + C (t + RTT - K)^3 (RFC 9438 section 4.2, in segments; `cut` the last cut's
/// LossCut), at most 1.5 cwnd (Linux's cnt >= 2).
double WindowAfterLossFreeRound(const TcpFlowParams& params, double cwndBytes, const LossCut& cut,
                                double epochS);

/// Goodput in bytes/s of `params`' flow under its random loss (params.loss > 0), as in the
/// file comment: the loss-event rate and the mean window solved together (a fixed point: a
/// larger window spaces the events further), at most the send buffer per round trip, and the
/// timeouts' share.
double LossThroughputBytesPerSecond(const TcpFlowParams& params);

/// Linux's smoothed round trip (tcp_rtt_estimator: srtt += (sample - srtt) / 8 per RTT sample)
/// after `samples` samples that rise evenly from just above `fromS` to `lastS` (sample i of n is
/// fromS + i (lastS - fromS) / n; all equal to lastS when fromS == lastS), starting from `srttS`.
/// A closed form: O(1) for any number of samples. REQUIRES: samples >= 1.
double SmoothedRttAfter(double srttS, double fromS, double lastS, double samples);

/// Linux's retransmission timeout at smoothed round trip `srttS`: SRTT + 200 ms (TCP_RTO_MIN,
/// the floor of RTTVAR's share; as the restart after idle uses it).
double LinuxRtoSeconds(double srttS);

/// Seconds from a lost segment leaving to its repair leaving, as Linux's loss recovery finds the
/// loss (RFC 8985 with Linux's timers), when `segmentsAfter` segments follow it on the stream,
/// each `segmentS` seconds apart at the sender, over a path of base round trip
/// `params.rtt_s` and smoothed round trip `srttS`:
///   - 3 or more: the third one's SACK reaches the sender a round trip after it left and the
///     segment is marked lost at once (the duplicate-ACK threshold; RACK's reordering window is
///     0 then): rtt + 3 segmentS;
///   - 1 or 2: RACK marks it lost a reordering window (min RTT / 4) after the last one's SACK:
///     rtt + n segmentS + rtt / 4;
///   - none (a tail loss): no SACK comes; the tail loss probe, armed at the last ACK (a round
///     trip after) with one segment out, fires after min(2 SRTT + 200 ms, RTO) (Linux's
///     tcp_schedule_loss_probe, the RTO re-armed by that ACK), and is the repair:
///     rtt + min(2 srtt + 0.2, LinuxRtoSeconds(srtt)).
double RepairDelaySeconds(const TcpFlowParams& params, double srttS, double segmentsAfter,
                          double segmentS);

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

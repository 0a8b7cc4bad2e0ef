// CubicWindow: how Linux's CUBIC grows its window after slow start and cuts it at a loss
// (net/ipv4/tcp_cubic.c: bictcp_update, bictcp_recalc_ssthresh, bictcp_reset, and
// tcp_cong_avoid_ai), as a pure state machine fed one ACK at a time, in segments.
//
// What ns-3 3.37's TcpCubic lacks and Linux has: the TCP-friendly region (tcp_friendliness = 1,
// Linux's default). Beside the cubic curve W(t) = C (t - K)^3 + W_max, Linux keeps an estimate
// of the window Reno would have (one segment per 15/8 windows of ACKs, i.e. 8/15 segments per
// round trip for beta 0.7) and grows at least as fast as it. On short round trips and small
// windows -- a 1%-loss path with a 20 ms round trip, where W_max is a few segments -- the curve
// needs seconds to climb back (K = cbrt((W_max - cwnd) / C) = 1.4 s from 2.8 to 4 segments)
// while Reno gains a segment every two round trips.
//
// Per ACK in congestion avoidance (cwnd >= ssthresh; the caller checks that cwnd limits):
//   - a new epoch starts at the first ACK after a cut: K and the origin from W_max, and the
//     Reno estimate from cwnd;
//   - the target is the curve one minimum RTT ahead, origin +- C |t + delay_min - K|^3, with
//     C = 0.4 segments / s^3; cnt = cwnd / (target - cwnd) ACKed segments per added segment, or
//     100 cwnd at or above the target, at most 20 before the first loss; cnt is recomputed at
//     most every 1/32 s while cwnd stays the same (Linux: HZ / 32 jiffies);
//   - the Reno estimate grows by one per (15 cwnd) / 8 ACKed segments; above cwnd it caps cnt at
//     cwnd / (estimate - cwnd); cnt is at least 2 (cwnd at most x1.5 per round trip);
//   - cwnd grows by one segment per cnt ACKed segments (tcp_cong_avoid_ai).
// Idle: when the connection sends again with nothing in flight, the epoch moves forward by the
// time since its last data segment (cubictcp_cwnd_event, CA_EVENT_TX_START), so the curve's t
// counts sending time only and an idle gap does not raise the target.
// At a loss: W_max = cwnd, or cwnd (1 + beta) / 2 below the previous W_max (fast convergence),
// and ssthresh = max(beta cwnd, 2) with beta = 717 / 1024. A retransmission timeout forgets
// everything (bictcp_reset).
#ifndef HILO_SIM_NET_CUBIC_WINDOW_H
#define HILO_SIM_NET_CUBIC_WINDOW_H

#include "ns3/nstime.h"

#include <cstdint>

namespace hilosim
{

class CubicWindow
{
  public:
    static constexpr uint32_t kBeta = 717;       // of 1024
    static constexpr uint32_t kBetaScale = 1024; // BICTCP_BETA_SCALE
    static constexpr double kC = 0.4;            // bic_scale 41 x 10 / 1024, segments / s^3

    /// One ACK of `ackedSegments` in congestion avoidance at `now` with cwnd `cwndSegments`;
    /// `delayMin` the smallest RTT seen (zero: none yet). Returns the new cwnd in segments.
    uint32_t OnAck(ns3::Time now, uint32_t cwndSegments, uint32_t ackedSegments,
                   ns3::Time delayMin);
    /// A loss at cwnd `cwndSegments`: the new ssthresh in segments (bictcp_recalc_ssthresh).
    uint32_t OnLoss(uint32_t cwndSegments);
    /// A retransmission timeout: back to the state of a new connection (bictcp_reset).
    void Reset();
    /// Data leaves at `now` with nothing in flight, `idle` after the last data segment: the
    /// epoch's start moves forward by `idle`, never past `now`.
    void OnSendAfterIdle(ns3::Time now, ns3::Time idle);

    uint32_t GetLastMaxCwnd() const { return m_lastMaxCwnd; }
    uint32_t GetRenoCwnd() const { return m_renoCwnd; }
    /// The current epoch's start (meaningful once congestion avoidance has begun).
    ns3::Time GetEpochStart() const { return m_epochStart; }

  private:
    /// bictcp_update: m_cnt for this ACK.
    void Update(ns3::Time now, uint32_t cwnd, uint32_t acked, ns3::Time delayMin);

    uint32_t m_cnt{0};         // ACKed segments per added segment
    uint32_t m_lastMaxCwnd{0}; // W_max
    uint32_t m_lastCwnd{0};    // cwnd when m_cnt was last computed
    ns3::Time m_lastTime{0};   // when m_cnt was last computed
    bool m_epochOn{false};     // an epoch has started
    ns3::Time m_epochStart{0};
    uint32_t m_originPoint{0}; // the curve's plateau
    double m_k{0};             // seconds from the epoch start to the plateau
    uint32_t m_ackCount{0};    // ACKed segments towards the Reno estimate
    uint32_t m_renoCwnd{0};    // the Reno estimate (tcp_cwnd)
    uint32_t m_cwndCount{0};   // ACKed segments towards the next added segment (snd_cwnd_cnt)
};

} // namespace hilosim

#endif // HILO_SIM_NET_CUBIC_WINDOW_H

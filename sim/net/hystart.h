// HyStart: how Linux's CUBIC leaves slow start before the first loss (net/ipv4/tcp_cubic.c,
// hystart_update and bictcp_acked, as since Linux 5.7), as a pure state machine fed one ACK at a
// time. ns-3 3.37's TcpCubic has an older HyStart whose thresholds are twice and eight times
// Linux's (below), so on a clean path it stays in slow start until the queue overflows.
//
// Rounds: a round ends when an ACK covers the highest sequence sent at its start
// (bictcp_hystart_reset), tracked on every ACK in slow start, below 16 segments too -- in Linux
// 6.18, the emulation's kernel, hystart_update tests the round before the low window, so the
// first round starts at the first ACK and every later one at the first ACK of a burst (read
// from its TCPHystartTrainCwnd and a packet trace: results/validation/simulator-rerun.md).
// While cwnd < ssthresh and cwnd >= 16 segments, and until an exit point has been found
// (found: only a loss timeout clears it):
//   - ACK train: ACKs closer than 2 ms to the previous one extend the train; once the train has
//     lasted longer than (delay_min + ack_delay), halved when the sender does not pace (its
//     bursts reach the bottleneck back to back), the exit point is found. ack_delay allows for
//     delayed and aggregated ACKs: min(1 ms, 4 x 64 KiB of GSO at the pacing rate).
//   - delay increase: the smallest RTT of the round, once 8 samples have been seen, above
//     delay_min + clamp(delay_min / 8, 4 ms, 16 ms).
// delay_min is the smallest RTT sample ever seen. At the exit point ssthresh = cwnd, so the
// connection continues in congestion avoidance (CUBIC's curve) without a loss.
#ifndef HILO_SIM_NET_HYSTART_H
#define HILO_SIM_NET_HYSTART_H

#include "ns3/nstime.h"

#include <cstdint>

namespace hilosim
{

struct HyStartAck
{
    ns3::Time now;
    ns3::Time rtt;             // this ACK's RTT sample (zero or negative: none)
    uint64_t cwnd_segments{0}; // before the ACK's growth
    bool in_slow_start{false}; // cwnd < ssthresh
    uint32_t snd_una{0};       // highest cumulative ACK (sequence numbers may wrap)
    uint32_t snd_nxt{0};       // highest sequence sent
    bool paced{false};         // the sender paces (BBR, or an fq qdisc)
    double pacing_rate_Bps{0}; // bytes per second Linux's pacing rate would be (0: unknown)
};

class HyStart
{
  public:
    static constexpr uint64_t kLowWindowSegments = 16;
    static constexpr uint32_t kMinSamples = 8;
    static constexpr int64_t kAckDeltaUs = 2000; // hystart_ack_delta_us: longer gaps break a train

    /// Linux's hystart_ack_delay: min(1 ms, 4 x 64 KiB / pacing rate); 0 when the rate is 0.
    static ns3::Time AckDelay(double pacingRateBytesPerSecond);
    /// HYSTART_DELAY_THRESH(delay_min / 8): clamp(delayMin / 8, 4 ms, 16 ms).
    static ns3::Time DelayThreshold(ns3::Time delayMin);

    /// Starts a round now (bictcp_hystart_reset), the next ending at `sndNxt`.
    void Reset(ns3::Time now, uint32_t sndNxt);
    /// One ACK. True when it finds the exit point (the caller sets ssthresh = cwnd); from then
    /// on false until Restart().
    bool OnAck(const HyStartAck& ack);
    /// After a retransmission timeout (bictcp_reset): delay_min forgotten and the search on
    /// again, from a new round.
    void Restart(ns3::Time now, uint32_t sndNxt);

    bool Found() const { return m_found; }
    /// Exit points found so far by the ACK train and by the delay increase (Linux's netstat
    /// TCPHystartTrainDetect and TCPHystartDelayDetect, for one connection).
    uint64_t GetTrainExits() const { return m_trainExits; }
    uint64_t GetDelayExits() const { return m_delayExits; }
    ns3::Time GetDelayMin() const { return m_delayMin; }
    /// A round has been started, ending at the first ACK whose snd_una is after GetRoundEnd().
    bool RoundStarted() const { return m_started; }
    uint32_t GetRoundEnd() const { return m_endSeq; }

  private:
    bool m_found{false};
    bool m_started{false};   // a round has been started
    ns3::Time m_delayMin{0}; // 0: no sample yet
    ns3::Time m_roundStart{0};
    ns3::Time m_lastAck{0};
    uint32_t m_endSeq{0};
    ns3::Time m_currRtt{0}; // smallest sample of the round (0: none)
    uint32_t m_sampleCount{0};
    uint64_t m_trainExits{0};
    uint64_t m_delayExits{0};
};

} // namespace hilosim

#endif // HILO_SIM_NET_HYSTART_H

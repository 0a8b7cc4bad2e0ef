// TcpLinuxSocket: ns-3 3.37's TcpSocketBase with Linux's loss detection added. ns-3 3.37 has no
// attribute that picks the socket class (TcpL4Protocol's SocketType names the congestion
// control), so Create() builds one as TcpL4Protocol::CreateSocket does (the node's RTT estimator
// and recovery types) and registers it with TcpL4Protocol::AddSocket; MessageEndpoint makes
// every socket this way.
//   - a tail loss probe (RFC 8985 section 7; Linux's tcp_schedule_loss_probe /
//     tcp_send_loss_probe): with data in flight and the connection in Open state, a probe
//     timeout PTO = 2 SRTT (plus 200 ms with a single segment in flight, for a delayed ACK; 2 ms
//     otherwise), never later than the RTO, is armed after new data is sent and after every ACK
//     that leaves data outstanding. When it fires, one segment goes out: new data if there is
//     any and the peer's window allows, else the last segment sent again. Its ACK (or SACK)
//     turns a tail loss, which no duplicate ACKs would report, into a fast recovery instead of
//     a retransmission timeout. One probe per episode, until an ACK acknowledges new data.
//   - RACK's time-based loss detection (RFC 8985 section 6.2) for the first unacknowledged
//     segment: it is lost once a segment sent after it has been delivered (cumulatively or by
//     SACK) and RACK.rtt + RACK.reo_wnd (min RTT / 4) has passed since it was sent; then the
//     socket enters fast recovery (ns-3's own, PRR and the RFC 6675 scoreboard) without waiting
//     for three duplicate ACKs. A reordering timer checks again when that time comes.
//   - the RTT congestion control sees: ns-3 3.37 hands PktsAcked its smoothed RTT (TcpSocketBase::
//     EstimateRtt sets TcpSocketState::m_lastRtt, "last RTT sample", to RttEstimator's estimate),
//     where Linux hands pkts_acked the RTT of the most recently sent segment this ACK delivers,
//     never a retransmitted one (tcp_clean_rtx_queue's ca_rtt_us; Karn). HyStart's delay test
//     and delay_min, and the restart's RTO estimate (sim/net/tcp-idle-restart.h), are made for
//     per-ACK samples: fed the SRTT that a previous burst's queue inflated, HyStart found a
//     delay increase on an empty path and left slow start after an idle restart. So after
//     ns-3's estimator has run (its RTO is unchanged) m_lastRtt is set to that sample, and
//     m_minRtt to the smallest sample; an ACK that delivers nothing new keeps the last sample.
//   - TCP small queues, approximately: Create() makes its node's FIFO egress queues fair
//     (per-connection round robin) and unbounded (sim/net/host-egress.h), so a window sent at
//     once (senders other than BBR do not pace) waits at the host's own NIC, sharing it with
//     the host's other connections, instead of being dropped there.
// ns-3 3.37 has neither: its only answer to a tail loss is the retransmission timeout. The
// timers Linux pairs with them are socket attributes: SocketOptions sets Linux's 40 ms delayed
// ACK; the minimum RTO stays ns-3's 1 s (socket-options.cc says why). The SRTT, RTO and
// congestion control are ns-3's.
#ifndef HILO_SIM_NET_TCP_LINUX_SOCKET_H
#define HILO_SIM_NET_TCP_LINUX_SOCKET_H

#include "sim/net/tcp-trace.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/sequence-number.h"
#include "ns3/tcp-option-sack.h"
#include "ns3/tcp-socket-base.h"

#include <cstdint>
#include <deque>

namespace hilosim
{

class TcpLinuxSocket : public ns3::TcpSocketBase
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override;
    TcpLinuxSocket() = default;
    TcpLinuxSocket(const TcpLinuxSocket& sock);

    /// A socket on `node`'s TCP (REQUIRES: an internet stack installed), unbound.
    static ns3::Ptr<TcpLinuxSocket> Create(ns3::Ptr<ns3::Node> node);

    /// Tail loss probes sent and fast recoveries RACK started, so far.
    uint32_t GetProbesSent() const { return m_probes; }
    uint32_t GetRackRecoveries() const { return m_rackRecoveries; }
    /// The sending state for the TCP trace (sim/net/tcp-trace.h), `peer` the other end:
    /// cwnd, ssthresh, ns-3's SRTT, the smallest per-ACK RTT sample, bytes acknowledged,
    /// segments sent again, and the counters of a TcpLinuxCubic's HyStart (empty under another
    /// congestion control). The delivery rate is left to the sampler (TcpTraceSampler).
    TcpTraceSample TraceSample(uint32_t peer) const;

  protected:
    ns3::Ptr<ns3::TcpSocketBase> Fork() override;
    uint32_t SendDataPacket(ns3::SequenceNumber32 seq, uint32_t maxSize, bool withAck) override;
    void ReceivedAck(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& tcpHeader) override;
    void ProcessAck(const ns3::SequenceNumber32& ackNumber, bool scoreboardUpdated,
                    uint32_t currentDelivered,
                    const ns3::SequenceNumber32& oldHeadSequence) override;
    void ReTxTimeout() override;
    void EstimateRtt(const ns3::TcpHeader& tcpHeader) override;
    void DoDispose() override;

  private:
    struct Sent
    {
        ns3::SequenceNumber32 begin;
        ns3::SequenceNumber32 end;
        ns3::Time at; // last (re)transmission
        bool delivered{false};
        bool retransmitted{false};
    };

    /// The SACK blocks `tcpHeader` carries (none without the option).
    static ns3::TcpOptionSack::SackList SackBlocks(const ns3::TcpHeader& tcpHeader);
    /// Whether an ACK up to `ack` with `blocks` covers `s` whole.
    static bool Covers(const Sent& s, ns3::SequenceNumber32 ack,
                       const ns3::TcpOptionSack::SackList& blocks);
    /// Linux's ca_rtt_us for `tcpHeader`: the time since the most recently sent segment it
    /// newly delivers was sent, among those never retransmitted; zero when there is none.
    ns3::Time AckRttSample(const ns3::TcpHeader& tcpHeader) const;

    void SchedulePto();
    void ProbeTimeout();
    /// RACK: marks what `tcpHeader` acknowledges or SACKs as delivered and advances RACK's
    /// most recent delivered transmission time.
    void RackDelivered(const ns3::TcpHeader& tcpHeader);
    /// RACK's loss check for the first unacknowledged segment; enters recovery when it is lost,
    /// else arms the reordering timer.
    void RackDetect(uint32_t currentDelivered);
    void ReorderTimeout();
    bool Open() const;

    bool m_tailLossProbe{true};
    bool m_rack{true};
    std::deque<Sent> m_sent; // unacknowledged segments in sequence order
    ns3::EventId m_ptoEvent;
    ns3::EventId m_reorderEvent;
    bool m_probeOut{false};             // a probe is out and no ACK of new data has come since
    bool m_probing{false};              // the probe is being sent (no PTO for it)
    ns3::Time m_rackXmit{0};            // RACK.xmit_ts
    ns3::SequenceNumber32 m_rackEnd{0}; // RACK.end_seq
    ns3::Time m_rackRtt{0};             // RACK.rtt
    ns3::Time m_minRtt{ns3::Time::Max()};
    uint32_t m_probes{0};
    uint32_t m_rackRecoveries{0};
    uint64_t m_bytesAcked{0};  // acknowledged cumulatively (the sequence number wraps)
    uint64_t m_retransmits{0}; // data segments sent again
};

} // namespace hilosim

#endif // HILO_SIM_NET_TCP_LINUX_SOCKET_H

// The flow model's engine: TCP byte streams over directed links whose rates are max-min fair
// (max-min-fair.h), re-shared whenever a stream starts or stops sending or a stream's own limit
// changes, each limited by its TCP window (tcp-flow-model.h). It runs on ns-3's scheduler: one
// pending event for the next change of any stream (a message's last byte leaving, a slow-start
// round ending, an expected loss), plus one event per message arrival.
//
// A stream is one direction of one connection. It carries framed messages back to back, like a
// TCP byte stream: a message's last byte leaves when the stream's sent bytes pass its end
// offset, and arrives TcpFlowParams::tail_s later (in order). Between changes every stream sends
// at a constant rate, so the state is exact at event times up to 1 ns rounding.
//
// Window per stream, W = min(cwnd, send buffer). TCP sends at most W bytes per round trip,
// unpaced in slow start and after it, as Linux's CUBIC without an fq qdisc (and the packet
// model): while the window binds a round sends W bytes at the fair share and then waits for the
// round's ACKs. A transfer shorter than W takes S / fair share, not S / (W / RTT). While the fair
// share binds instead (share < W / RTT), the stream sends continuously at its share and no round is
// timed. cwnd starts at the initial window when the stream opens; in slow start it grows by the
// bytes acknowledged (byte counting), counted at each round's end, or at the next re-sharing while
// no round is timed, and only while cwnd is the limit (Linux's tcp_is_cwnd_limited: a flight below
// cwnd -- a send buffer or a short message -- lets it grow to twice the flight). After an idle
// period longer than Linux's RTO the window restarts by the packet model's rule
// (CwndAfterIdle, sim/net/cwnd-restart.h; unless TcpFlowParams::restart_after_idle is off): cwnd
// halved once per RTO of idle down to the initial window, ssthresh at least 3/4 of the window
// before, slow start up to it.
// The RTO is Linux's, SRTT + 200 ms (TCP_RTO_MIN; 4 x RTTVAR, which Linux adds when larger, is
// left out), with SRTT smoothed as Linux smooths it (SmoothedRttAfter) over the RTT samples the
// model's own sending implies, one per delayed ACK (two segments): in slow start, with cwnd the
// limit, a round's bytes reach the bottleneck at twice the rate they drain (two segments out per
// segment acknowledged), so its samples rise from the base RTT to base + W / (2 x rate), W the
// bytes the round sent at `rate`, and so does the round right after one (its bytes leave as
// the slow-start round's ACKs come in, two segments per segment acknowledged, though cwnd
// reached ssthresh on the way); any other round that leaves within its round trip (congestion
// avoidance, or held to the send buffer) queues nothing; while the fair share binds, the window
// beyond rate x RTT stands in the queue. Left
// out, the queue of a 683 kB round at 100 Mbps (28 ms) decides a halving after 0.861 s of idle
// at 80 ms RTT, where Linux's SRTT includes it (results/validation/simulator-rerun.md).
// Slow start ends, for CUBIC, where Linux's HyStart ends it: the packet model's rule itself
// (sim/net/hystart.h) is fed the ACKs the model implies, one per two segments with the RTT
// samples above, spaced as the bytes left the bottleneck, and the snd_nxt Linux has at each: a
// HyStart round ends at the first ACK past the snd_nxt recorded where it started, and unpaced
// slow start sends two bytes per byte acknowledged, so snd_nxt runs ahead of the ACKs. Rounds
// are tracked from the first ACK on (sim/net/hystart.h), so each starts at the first ACK of a
// burst, whose samples carry no queue while the bursts drain within the round trip. A lone
// flow exits by the first of: the ACK train, once a burst's ACKs outlast half the minimum RTT
// (at 100 Mbps and 80 ms RTT 169 ACKs into the 640-segment burst: cwnd 978 segments, 1.47
// BDP; Linux's left at 492 = 320 + 172 at 50 Mbps), and the delay test, a round's smallest
// sample above the delay threshold (a standing queue while the fair share binds). At the
// exit ssthresh = cwnd, credited at the end of the round that found it; as in Linux, HyStart
// does not search again on that connection (only a loss timeout, which the model does not
// have, would restart it). Congestion avoidance then grows cwnd at the end of each round that
// filled it, as after a loss (below) with CUBIC's curve starting at the exit's window (K = 0),
// and, until the first loss, by at least 5% a round trip: Linux's CUBIC caps its ACK count per
// segment of growth at 20 while it has no W_max (bictcp_update), so an exit below the path's
// bandwidth-delay product regains the rest in a few round trips.
// Loss: see tcp-flow-model.h. Without a loss seed, a loss event falls at an expected stream
// offset (the first after 1/p segments, then LossEventRate's spacing at the window of the
// moment); with one, every segment is lost with probability p, drawn, and each lost segment's
// repair (RepairDelaySeconds, retransmission timeouts when a repair is lost too) holds back the
// delivery of the frames from it on. A loss event cuts cwnd by beta
// (WindowAfterLoss) and ends slow start with ssthresh = cwnd; a drawn one when it is found (the
// repair leaves), from the window then. After it (congestion avoidance) the
// window grows at the end of each round that filled it and had no loss event (no growth in
// recovery) by WindowAfterLossFreeRound: CUBIC's curve from the cut's W_max, t the sending time
// since the cut; while the fair share binds (no rounds are timed; the window beyond it waits in
// the bottleneck's queue), once per window acknowledged, up to rate x (RTT + that queue)
// (GrowWhileShared).
#ifndef HILO_SIM_NET_FLOW_FLOW_NETWORK_H
#define HILO_SIM_NET_FLOW_FLOW_NETWORK_H

#include "sim/net/flow/incremental-max-min.h"
#include "sim/net/flow/stream-id-set.h"
#include "sim/net/flow/tcp-flow-model.h"
#include "sim/net/hystart.h"
#include "sim/net/message.h"
#include "sim/net/tcp-trace.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

class FlowNetwork : public ns3::SimpleRefCount<FlowNetwork>
{
  public:
    /// One message on a stream, framed as on a TCP connection (message-frame.h).
    struct Frame
    {
        std::string header;                         // the 32 frame-header bytes
        std::shared_ptr<const std::string> payload; // real bytes
        uint64_t stream_bytes{0};                   // header + wire bytes
        MessageMeta meta;                           // what the sender reports when it leaves
        bool internal{false};                       // the connection's hello
    };
    using SentHandler = std::function<void(const Frame&)>;
    using ArrivalHandler = std::function<void(const Frame&)>;

    /// `capacityBytesPerSecond`: wire capacity of each directed link. `lossSeed`: draw the losses
    /// of lossy streams (tcp-flow-model.h), stream i from a generator seeded by (lossSeed, i),
    /// so a run is the same for the same seed; none: expected losses, no draws.
    explicit FlowNetwork(std::vector<double> capacityBytesPerSecond,
                         std::optional<uint64_t> lossSeed = std::nullopt);
    ~FlowNetwork();

    /// A stream over the directed links `links` (each index used once). Arrivals are scheduled
    /// in the ns-3 context `receiverContext` (the receiving node's id). Returns its id.
    uint32_t AddStream(std::vector<uint32_t> links, const TcpFlowParams& params,
                       uint32_t receiverContext);
    /// The sender's handler (a message's last byte left; not called for internal frames) and
    /// the receiver's (a frame arrived). Either may be empty.
    void SetSentHandler(uint32_t stream, SentHandler sent);
    void SetArrivalHandler(uint32_t stream, ArrivalHandler arrived);

    /// The connection is up: the stream may send from now on, starting at its initial window.
    /// Frames queued before leave now. REQUIRES: not open yet.
    void Open(uint32_t stream);
    /// Queues a frame behind those already on the stream.
    void Enqueue(uint32_t stream, Frame frame);

    bool IsOpen(uint32_t stream) const { return m_streams.at(stream).open; }
    /// Stream bytes queued and not yet sent (after bringing the state to now).
    double GetBacklog(uint32_t stream);
    /// Current goodput in bytes/s (0 while idle) and congestion window in bytes.
    double GetRate(uint32_t stream);
    double GetCwnd(uint32_t stream);
    /// Slow-start threshold in bytes (infinity until slow start has ended).
    double GetSsthresh(uint32_t stream);
    const TcpFlowParams& GetParams(uint32_t stream) const { return m_streams.at(stream).tcp; }
    /// Drawn losses only: segments lost, tail loss probes and retransmission timeouts so far.
    struct LossCounts
    {
        uint64_t lost{0};
        uint64_t probes{0};
        uint64_t timeouts{0};
    };
    const LossCounts& GetLossCounts(uint32_t stream) const { return m_streams.at(stream).counts; }
    /// The stream's sending state for the TCP trace (sim/net/tcp-trace.h) as of the last event
    /// (only reads; the state between events is not brought to now): cwnd, ssthresh, SRTT, the
    /// base RTT as min_rtt, goodput as the delivery rate, the repairs of drawn losses as
    /// retransmits (empty without a loss seed), HyStart's exits. bytes_acked is left empty (the
    /// model does not time ACKs byte by byte). `peer` is left 0 for the caller.
    TcpTraceSample TraceSample(uint32_t stream) const;
    /// Times the rates were re-shared (for cost measurements).
    uint64_t GetReallocations() const { return m_reallocations; }

    /// Cancels pending events and forgets every handler (at simulation teardown).
    void Dispose();

  private:
    struct Stream
    {
        std::vector<uint32_t> links;
        TcpFlowParams tcp;
        uint32_t context{0};
        SentHandler sent;
        ArrivalHandler arrived;

        bool open{false};
        bool active{false};                         // open and with bytes to send
        std::deque<std::pair<double, Frame>> queue; // frames not fully sent, with end offsets
        double queuedEnd{0};                        // stream offset after the last queued byte
        double sentBytes{0};                        // stream offset sent so far
        double rate{0};                             // goodput bytes/s
        double cap{0};                              // window / RTT at the last re-sharing

        double cwnd{0};
        bool slowStart{true};
        double ssthresh{std::numeric_limits<double>::infinity()}; // slow start ends at it
        ns3::Time sendEnd;        // when the last queued byte left (start of an idle period)
        bool roundOn{false};      // a round trip is being timed (the window binds)
        ns3::Time roundEnd;       // when the current round's bytes are acknowledged
        ns3::Time roundStart;     // when the current round began
        double roundStartSent{0}; // sent offset when the round began
        double roundWindow{0};    // bytes the round may send
        bool roundSpent{false};   // the round's window has been sent
        bool roundLoss{false};    // a loss event fell in the round (it is in recovery)
        double ackedMark{0};      // sent offset up to which cwnd has been credited
        double prevRoundBytes{0}; // bytes of the round before the current one (0: none)
        double nextLossAt{std::numeric_limits<double>::infinity()}; // sent offset
        bool roundSlowStart{false};  // the round began in slow start, cwnd the limit
        bool followsDoubling{false}; // the round before was such a round (StartRound)
        bool roundDoubling{false};   // either: its bytes leave at twice the drain
        ns3::Time roundSpentAt;      // when the round's window was out
        double srtt{0};              // Linux's smoothed RTT, seconds (Acknowledge)
        LossCut lastCut;             // the last loss cut (CUBIC's W_max and K)
        bool lossSeen{false};        // a loss event has cut cwnd (Linux's last_max_cwnd > 0)
        double epochS{0};            // sending time since that cut (CUBIC's t), seconds
        double renoEst{0};           // CUBIC's Reno-friendly window this epoch (0: not begun)
        HyStart hystart;             // CUBIC's slow-start exit (Acknowledge)
        double sharedAcked{0};       // acknowledged while the share bound, since the last growth

        std::deque<Frame> inFlight; // left, not yet arrived
        ns3::Time lastArrival;

        // Drawn losses (a loss seed): nextLossAt is then the start of the next lost segment.
        bool draws{false};
        uint64_t rng{0};        // the stream's generator (splitmix64 state)
        double recoveryEnd{-1}; // stream offset in flight at the last cut: losses before it
                                // belong to its recovery and do not cut again
        bool cutPending{false}; // a loss event left, not yet found: its cut comes at cutAt
        ns3::Time cutAt;        // when the sender finds it (the repair leaves)
        std::deque<std::pair<double, ns3::Time>> holes; // lost segment's offset, its repair's
                                                        // arrival
        bool rtoPending{false};
        ns3::Time rtoAt;   // a retransmission timeout to come (a repair was lost)
        double rtoHole{0}; // the lost segment it repairs
        LossCounts counts;
    };

    /// Brings every stream to now, handles departures, losses and round ends, re-shares the
    /// rates if needed, schedules the next change and then runs the handlers collected.
    void Update();
    void Advance(ns3::Time now);
    void Process(uint32_t id, ns3::Time now);
    void Reallocate(ns3::Time now);
    /// Linux's congestion-window restart after idle, when an idle stream gets bytes again.
    static void RestartAfterIdle(Stream& s, ns3::Time now);
    void ScheduleNext(ns3::Time now);
    void Arrive(uint32_t id);
    /// A loss event's cut (WindowAfterLoss): slow start over, ssthresh = the new cwnd, no growth
    /// in this round (recovery).
    static void CutWindow(Stream& s);
    /// Drawn losses: the lost segment at s.nextLossAt just left (`now`): its repair, its cut
    /// (at its detection, FoundLoss) unless in recovery or a cut is pending, and the next lost
    /// segment drawn.
    static void DrawnLoss(Stream& s, ns3::Time now);
    /// A drawn loss event is found (s.cutAt, or the stream goes idle first): the cut, from the
    /// window grown since the segment left, and recovery up to the bytes sent by now (Linux's
    /// high_seq = snd_nxt on entering recovery).
    static void FoundLoss(Stream& s);
    /// A retransmission timeout due by `now`: cwnd one segment, slow start to ssthresh.
    void ApplyTimeout(Stream& s, ns3::Time now);
    /// The frame ending at stream offset `end`, its last byte out at `now`: when it arrives, in
    /// order and after the repairs of the lost segments in it or before it.
    static ns3::Time ArrivalOf(Stream& s, double end, ns3::Time now);
    double Cap(const Stream& s) const;
    void StartRound(Stream& s, ns3::Time now);
    /// The ACKs of the bytes sent since the last call (see the file comment): their RTT samples
    /// to SRTT, each to HyStart while CUBIC is in slow start, then CreditAcked. `burstOver`: a
    /// round is timed and its sending is over (its window out, or the data ran out) at
    /// `burstEnd`; else the fair share binds and the stream sent at s.rate until `now`.
    static void Acknowledge(Stream& s, bool burstOver, ns3::Time burstEnd, ns3::Time now);
    /// Slow start's growth by the bytes acknowledged since the last call, at most `growth` of
    /// them (fewer: HyStart's exit point came first; ssthresh = cwnd there).
    static void CreditAcked(Stream& s, double growth);
    /// Congestion avoidance while the fair share binds (no rounds are timed): the window beyond
    /// rate x RTT stands in the bottleneck's queue and each segment out is one in, so cwnd is
    /// the limit (Linux's tcp_is_cwnd_limited) and grows as after a round that filled it, once
    /// per window of the `bytes` acknowledged (outside recovery), a round trip the queue
    /// lengthens; at most what the path and its full queue hold at this share.
    static void GrowWhileShared(Stream& s, double bytes);
    /// The window after a round of congestion avoidance that filled it: the variant's rule
    /// (WindowAfterLossFreeRound), for CUBIC at least its Reno-friendly estimate s.renoEst,
    /// which this round advances.
    static double CongestionAvoidanceNext(Stream& s);
    /// Congestion avoidance that GrowWhileShared grows: slow start over (a loss or HyStart's
    /// exit) and the send buffer not the limit.
    static bool InSharedAvoidance(const Stream& s);
    /// Bytes still to send before GrowWhileShared's next growth (infinity: none due).
    static double SharedGrowthDue(const Stream& s);

    std::vector<double> m_capacity;
    std::optional<uint64_t> m_lossSeed;
    IncrementalMaxMinFair m_fair; // the active streams' demands and max-min fair rates
    std::vector<Stream> m_streams;
    // The per-event loops visit only these (stream-id-set.h): streams with bytes to send, and
    // those that went idle since the last re-sharing (the allocator must drop them).
    StreamIdSet m_active;
    StreamIdSet m_wentIdle;
    ns3::Time m_lastAdvance;
    ns3::EventId m_next;
    bool m_dirty{false};
    bool m_updating{false};
    std::vector<std::function<void()>> m_deferred; // handlers to run once the state is consistent
    uint64_t m_reallocations{0};
};

} // namespace hilosim

#endif // HILO_SIM_NET_FLOW_FLOW_NETWORK_H

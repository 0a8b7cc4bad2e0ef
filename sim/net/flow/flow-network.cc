#include "sim/net/flow/flow-network.h"

#include "sim/net/cwnd-restart.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace hilosim
{

namespace
{

// Stream bytes until the next loss event of a flow sending at `rate` with window `window`
// (LossEventRate, tcp-flow-model.h): a round carries the window, or less where the fair share
// binds. (A window-bound round leaves at the link rate, so the rate alone overstates it.)
double
LossEventSpacing(const TcpFlowParams& tcp, double rate, double window)
{
    const double w = std::min(rate * tcp.rtt_s, window) / tcp.mss_bytes;
    return tcp.mss_bytes / LossEventRate(tcp.loss, w);
}

// splitmix64 (Steele, Lea and Flood, 2014): a small seeded generator per stream.
uint64_t
NextRandom(uint64_t& state)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform in (0, 1], from the top 53 bits.
double
Uniform(uint64_t& state)
{
    return (static_cast<double>(NextRandom(state) >> 11) + 1.0) * 0x1.0p-53;
}

// Segments up to and including the next lost one when each is lost with probability p in (0, 1):
// geometric on 1, 2, ... (inverse transform, so the same on every standard library).
double
SegmentsToNextLoss(uint64_t& state, double p)
{
    return 1.0 + std::floor(std::log(Uniform(state)) / std::log1p(-p));
}

} // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacityBytesPerSecond,
                         std::optional<uint64_t> lossSeed)
  : m_capacity(std::move(capacityBytesPerSecond))
  , m_lossSeed(lossSeed)
  , m_fair(m_capacity)
{
}

FlowNetwork::~FlowNetwork() = default;

uint32_t
FlowNetwork::AddStream(std::vector<uint32_t> links, const TcpFlowParams& params,
                       uint32_t receiverContext)
{
    for (uint32_t l : links)
    {
        NS_ABORT_MSG_IF(l >= m_capacity.size(), "FlowNetwork: link " << l << " does not exist");
    }
    NS_ABORT_MSG_IF(params.rtt_s <= 0, "FlowNetwork: a stream needs a positive round trip");
    Stream s;
    s.links = std::move(links);
    s.tcp = params;
    s.context = receiverContext;
    s.cwnd = params.initial_cwnd_bytes;
    // Linux's first sample is the handshake's.
    s.srtt = params.handshake_rtt_s > 0 ? params.handshake_rtt_s : params.rtt_s;
    if (params.loss > 0 && m_lossSeed)
    {
        s.draws = true;
        s.rng = *m_lossSeed ^ (0xd1b54a32d192ed03ull * (m_streams.size() + 1));
        NextRandom(s.rng); // (mixes the seed in before the first draw)
        s.nextLossAt = (SegmentsToNextLoss(s.rng, params.loss) - 1) * params.mss_bytes;
    }
    else if (params.loss > 0)
    {
        s.nextLossAt = params.mss_bytes / params.loss; // the first loss, in expectation
    }
    m_streams.push_back(std::move(s));
    return static_cast<uint32_t>(m_streams.size() - 1);
}

void
FlowNetwork::SetSentHandler(uint32_t stream, SentHandler sent)
{
    m_streams.at(stream).sent = std::move(sent);
}

void
FlowNetwork::SetArrivalHandler(uint32_t stream, ArrivalHandler arrived)
{
    m_streams.at(stream).arrived = std::move(arrived);
}

void
FlowNetwork::Open(uint32_t stream)
{
    Update();
    Stream& s = m_streams.at(stream);
    NS_ABORT_MSG_IF(s.open, "FlowNetwork::Open: stream " << stream << " is already open");
    s.open = true;
    if (s.queuedEnd > s.sentBytes)
    {
        s.active = true;
        m_active.Insert(stream);
        StartRound(s, ns3::Simulator::Now());
        m_dirty = true;
    }
    Update();
}

void
FlowNetwork::Enqueue(uint32_t stream, Frame frame)
{
    Update();
    Stream& s = m_streams.at(stream);
    s.queuedEnd += static_cast<double>(frame.stream_bytes);
    s.queue.emplace_back(s.queuedEnd, std::move(frame));
    if (s.open && !s.active)
    {
        if (s.rtoPending && ns3::Simulator::Now() >= s.rtoAt)
        {
            ApplyTimeout(s, ns3::Simulator::Now()); // it fired while the stream was idle
        }
        RestartAfterIdle(s, ns3::Simulator::Now());
        s.active = true;
        m_active.Insert(stream);
        StartRound(s, ns3::Simulator::Now());
        m_dirty = true;
    }
    Update();
}

double
FlowNetwork::GetBacklog(uint32_t stream)
{
    Update();
    const Stream& s = m_streams.at(stream);
    return s.queuedEnd - s.sentBytes;
}

double
FlowNetwork::GetRate(uint32_t stream)
{
    Update();
    return m_streams.at(stream).rate;
}

double
FlowNetwork::GetCwnd(uint32_t stream)
{
    Update();
    return m_streams.at(stream).cwnd;
}

double
FlowNetwork::GetSsthresh(uint32_t stream)
{
    Update();
    return m_streams.at(stream).ssthresh;
}

TcpTraceSample
FlowNetwork::TraceSample(uint32_t stream) const
{
    const Stream& s = m_streams.at(stream);
    TcpTraceSample t;
    t.cwnd_bytes = static_cast<uint64_t>(std::llround(s.cwnd));
    if (std::isfinite(s.ssthresh))
        t.ssthresh_bytes = static_cast<uint64_t>(std::llround(s.ssthresh));
    if (s.srtt > 0)
        t.srtt_s = s.srtt;
    t.min_rtt_s = s.tcp.rtt_s;
    t.delivery_rate_bps = s.rate * 8;
    if (s.draws)
        t.retransmits = s.counts.lost + s.counts.timeouts;
    t.in_slow_start = s.slowStart;
    t.hystart_train_exits = s.hystart.GetTrainExits();
    t.hystart_delay_exits = s.hystart.GetDelayExits();
    return t;
}

void
FlowNetwork::Dispose()
{
    m_next.Cancel();
    for (Stream& s : m_streams)
    {
        s.sent = nullptr;
        s.arrived = nullptr;
        s.queue.clear();
        s.inFlight.clear();
    }
    m_deferred.clear();
}

double
FlowNetwork::Cap(const Stream& s) const
{
    if (s.roundOn && s.roundSpent)
    {
        return 0; // waiting for the round's ACKs
    }
    // Unpaced, in slow start and after it, as Linux's CUBIC without an fq qdisc (and the packet
    // model): the round's window leaves at the fair share. A stream that crosses no link has no
    // share to stop it: one window per round trip.
    const double window = std::min(s.cwnd, s.tcp.window_bytes);
    return s.links.empty() ? window / s.tcp.rtt_s : std::numeric_limits<double>::infinity();
}

void
FlowNetwork::StartRound(Stream& s, ns3::Time now)
{
    s.roundOn = true;
    s.roundStart = now;
    s.roundEnd = now + ns3::Seconds(s.tcp.rtt_s);
    s.roundStartSent = s.sentBytes;
    s.roundWindow = std::min(s.cwnd, s.tcp.window_bytes);
    s.roundSpent = false;
    s.roundLoss = false;
    s.sharedAcked = 0; // rounds time the growth again
    // A round right after a slow-start round leaves as fast as that round's ACKs come in, two
    // segments per segment acknowledged, though cwnd reached ssthresh on the way: its bytes
    // build a queue as a slow-start round's do (Acknowledge).
    s.roundSlowStart = s.slowStart && s.cwnd <= s.tcp.window_bytes;
    s.roundDoubling = s.roundSlowStart || s.followsDoubling;
    s.followsDoubling = false;
}

void
FlowNetwork::Acknowledge(Stream& s, bool burstOver, ns3::Time burstEnd, ns3::Time now)
{
    const double bytes = s.sentBytes - s.ackedMark;
    if (bytes <= 0)
    {
        CreditAcked(s, bytes);
        return;
    }
    // The ACKs of these bytes as the model implies them (file comment): one per two segments,
    // their RTT samples rising evenly from just above `from` to `last`, `spacing` apart.
    const double ackBytes = 2 * s.tcp.mss_bytes;
    // (Events fall on whole nanoseconds: a boundary overshot by a fraction of a byte is no ACK.)
    const double samples = std::max(1.0, std::ceil((bytes - 1e-3) / ackBytes));
    const double base = s.tcp.rtt_s;
    double from = base;
    double last = base;
    double sending = 0; // seconds the bytes took to leave
    ns3::Time firstSent = now;
    if (burstOver)
    {
        // A slow-start round, cwnd the limit: the queue peaks at half the bytes it sent,
        // W / (2 x rate), i.e. half the time they took to leave. Any other round that left
        // within its round trip (after slow start, or held to the send buffer: one segment out
        // per segment acknowledged) finds the queue empty.
        sending = (burstEnd - s.roundStart).GetSeconds();
        firstSent = s.roundStart;
        last = base + (s.roundDoubling ? sending / 2 : 0.0);
    }
    else if (s.rate > 0)
    {
        // The fair share binds: the window beyond rate x RTT stands in the queue.
        sending = bytes / s.rate;
        firstSent = now - ns3::Seconds(sending);
        const double window = std::min(s.cwnd, s.tcp.window_bytes);
        from = last = base + std::max(0.0, window - s.rate * base) / s.rate;
    }
    double growth = bytes;
    if (s.tcp.cubic && s.slowStart && !s.hystart.Found())
    {
        // Linux's CUBIC runs HyStart on each ACK (sim/net/hystart.h): the same rule, fed the
        // model's ACKs, ends slow start where Linux's would, ssthresh = cwnd at that ACK.
        const double spacing = sending / samples; // ACKs leave the bottleneck as the bytes did
        const double step = (last - from) / samples;
        // Where a HyStart round starts (bictcp_hystart_reset): at the first ACK past the last
        // round's end_seq, which then records snd_nxt. Linux sends as the ACKs come in, so
        // snd_nxt runs ahead of them: after the first a bytes of a timed round's D are
        // acknowledged, the next round has sent what they freed and grew the window by,
        // min(cwnd + a, send buffer) - (D - a), as far as the data goes -- 2a while cwnd is the
        // limit. A round that starts at the k-th ACK of one burst so ends at the 2k-th of the
        // next, the same place in a burst twice as long: rounds start where the first one
        // started, at the first ACK of a burst (HyStart tracks rounds from the first ACK on),
        // and a round that started later in a burst would carry the queue that much of the
        // burst has built. While the fair share binds, a round is the window in flight.
        auto sndNxt = [&](double una, double ackedBefore)
        {
            const double window = std::min(s.cwnd + ackedBefore, s.tcp.window_bytes);
            if (!burstOver)
            {
                return una + window;
            }
            const double freed = std::max(0.0, window - (bytes - ackedBefore));
            return s.sentBytes + std::min(freed, s.queuedEnd - s.sentBytes);
        };
        auto feed = [&](double i)
        {
            const double ackedBefore = (i - 1) * ackBytes;
            const double una = s.ackedMark + std::min(bytes, i * ackBytes);
            HyStartAck ack;
            ack.rtt = ns3::Seconds(from + i * step);
            ack.now = firstSent + ns3::Seconds(from + (i - 1) * spacing);
            ack.cwnd_segments =
                static_cast<uint64_t>(std::floor((s.cwnd + ackedBefore) / s.tcp.mss_bytes + 1e-9));
            ack.in_slow_start = s.cwnd + ackedBefore < s.ssthresh;
            ack.snd_una = static_cast<uint32_t>(static_cast<uint64_t>(una));
            ack.snd_nxt = static_cast<uint32_t>(static_cast<uint64_t>(sndNxt(una, ackedBefore)));
            ack.paced = false; // Linux's CUBIC without an fq qdisc
            ack.pacing_rate_Bps = 2 * (s.cwnd + ackedBefore) / s.srtt;
            if (!s.hystart.OnAck(ack))
            {
                return false;
            }
            growth = ackedBefore; // this ACK's growth is cut by ssthresh = cwnd
            return true;
        };
        // The ACK (1-based) that starts the next round: the first whose snd_una passes the
        // current round's end (beyond `samples`: a later call's).
        double resetAck = 1;
        if (s.hystart.RoundStarted())
        {
            const auto ahead =
                static_cast<int32_t>(s.hystart.GetRoundEnd() -
                                     static_cast<uint32_t>(static_cast<uint64_t>(s.ackedMark)));
            resetAck = std::max(1.0, std::floor(ahead / ackBytes) + 1);
        }
        // Feed only the ACKs that can decide (an exit comes within one window of ACKs once
        // cwnd is at HyStart's low window, or never). Where no ACK can end slow start -- a
        // train that cannot outlast half the minimum RTT (each gap above 2 ms breaks it; a
        // timed round's train is its own) and samples no higher than the delay threshold --
        // just the first, for delay_min, and the round start with the samples that fill its
        // count, so the rounds keep their place.
        const double delayMin =
            s.hystart.GetDelayMin().IsZero() ? from + step : s.hystart.GetDelayMin().GetSeconds();
        // (A microsecond's margin: HyStart sees these times rounded to nanoseconds.)
        const bool trainTooShort = spacing > (HyStart::kAckDeltaUs + 1) * 1e-6 ||
                                   (burstOver && (samples - 1) * spacing <= delayMin / 2);
        const bool delayTooLow =
            last + 1e-6 <= delayMin + HyStart::DelayThreshold(ns3::Seconds(delayMin)).GetSeconds();
        const double lowWindowAcks =
            std::max(0.0, HyStart::kLowWindowSegments * s.tcp.mss_bytes - s.cwnd) / ackBytes;
        if (trainTooShort && delayTooLow)
        {
            feed(1);
            // (From the ACK before: the truncation of stream offsets to sequence numbers.)
            const double first = std::max(2.0, resetAck - 1);
            for (double i = first; i <= std::min(samples, resetAck + HyStart::kMinSamples); ++i)
            {
                feed(i);
            }
        }
        else
        {
            const double decisive =
                std::max(std::ceil(lowWindowAcks + std::min(s.cwnd, s.tcp.window_bytes) / ackBytes +
                                   delayMin / std::max(spacing, 1e-9)),
                         resetAck) +
                HyStart::kMinSamples + 2;
            for (double i = 1; i <= std::min(samples, decisive); ++i)
            {
                if (feed(i))
                {
                    break;
                }
            }
        }
    }
    s.srtt = SmoothedRttAfter(s.srtt, from, last, samples);
    const double markBefore = s.ackedMark;
    CreditAcked(s, growth);
    if (!burstOver && s.rate > 0)
    {
        GrowWhileShared(s, s.sentBytes - std::max(markBefore, s.recoveryEnd));
    }
}

bool
FlowNetwork::InSharedAvoidance(const Stream& s)
{
    return !s.slowStart && (s.tcp.loss > 0 || s.hystart.Found()) &&
           s.cwnd < s.tcp.window_bytes * (1 - 1e-9);
}

double
FlowNetwork::SharedGrowthDue(const Stream& s)
{
    if (!InSharedAvoidance(s) || s.cwnd >= s.rate * (s.tcp.rtt_s + s.tcp.queue_s) * (1 - 1e-9))
    {
        return std::numeric_limits<double>::infinity();
    }
    return std::max(0.0,
                    s.cwnd - s.sharedAcked - (s.sentBytes - std::max(s.ackedMark, s.recoveryEnd)));
}

void
FlowNetwork::GrowWhileShared(Stream& s, double bytes)
{
    if (!InSharedAvoidance(s))
    {
        s.sharedAcked = 0; // slow start grows by CreditAcked; a full send buffer is the limit
        return;
    }
    // What the path and its full queue hold at this share; beyond it the queue would overflow
    // (a loss event the model does not draw), so the window stops there.
    const double ceiling = s.rate * (s.tcp.rtt_s + s.tcp.queue_s);
    s.sharedAcked += std::max(0.0, bytes);
    while (s.sharedAcked >= s.cwnd && s.cwnd < ceiling)
    {
        // One window acknowledged: a round trip, as long as the queue makes it.
        s.sharedAcked -= s.cwnd;
        s.epochS += s.cwnd / s.rate;
        s.cwnd = std::min(CongestionAvoidanceNext(s), ceiling);
    }
}

double
FlowNetwork::CongestionAvoidanceNext(Stream& s)
{
    double next = WindowAfterLossFreeRound(s.tcp, s.cwnd, s.lastCut, s.epochS);
    if (s.tcp.cubic)
    {
        // CUBIC's Reno-friendly estimate (Linux's ca->tcp_cwnd, RFC 9438's W_est): from the
        // window at the epoch's first round, alpha segments per round that grew, kept over
        // restarts after idle as the epoch is. A window that slow start left below it (a
        // restart) climbs back to it within a round, at most by half (Linux's cnt >= 2).
        const double alpha = LossResponseAlpha(s.tcp.beta, true) * s.tcp.mss_bytes;
        s.renoEst = (s.renoEst > 0 ? s.renoEst : s.cwnd) + alpha;
        next = std::max(next, std::min(s.renoEst, 1.5 * s.cwnd));
        if (!s.lossSeen)
        {
            next = std::max(next, 1.05 * s.cwnd); // no W_max yet: cnt <= 20
        }
    }
    return next;
}

void
FlowNetwork::CreditAcked(Stream& s, double growth)
{
    const double acked = s.sentBytes - s.ackedMark;
    if (s.slowStart && acked > 0)
    {
        // Byte counting (RFC 3465), as ns-3 in slow start, but only while cwnd is the limit
        // (Linux's tcp_is_cwnd_limited): at most one window is in flight, and a flight below
        // cwnd lets it grow to twice the flight, no further. Linux measures the flight at each
        // send, and in slow start a round's sends overlap the previous round's ACKs (two
        // segments out per segment acknowledged): after b bytes of a round, the previous
        // round's P bytes are half acknowledged, so P + b / 2 are in flight. A round cut short
        // by the data running out is therefore still cwnd-limited (Linux then ends with cwnd
        // = 2 (P + b / 2)), not a flight of b alone.
        const double flight = std::max(acked, s.prevRoundBytes + acked / 2);
        const double inFlight = std::min({flight, s.cwnd, s.tcp.window_bytes});
        double grown = s.cwnd + std::min(acked, growth);
        if (!CwndLimit(s.cwnd, s.ssthresh, inFlight >= s.cwnd * (1 - 1e-9), inFlight))
        {
            grown = s.cwnd;
        }
        else if (inFlight < s.cwnd * (1 - 1e-9))
        {
            grown = std::min(grown, 2 * inFlight);
        }
        s.cwnd = grown;
        if (growth < acked)
        {
            s.ssthresh = s.cwnd; // HyStart's exit point
            if (!s.lossSeen)
            {
                // CUBIC's first epoch starts here, its curve from this window (K = 0).
                s.lastCut = LossCut{s.cwnd, s.cwnd, 0};
                s.epochS = 0;
                s.renoEst = 0;
            }
        }
        if (s.cwnd >= s.ssthresh)
        {
            s.cwnd = s.ssthresh;
            s.slowStart = false;
        }
    }
    s.ackedMark = s.sentBytes;
}

void
FlowNetwork::RestartAfterIdle(Stream& s, ns3::Time now)
{
    if (!s.tcp.restart_after_idle || s.sentBytes <= 0)
    {
        return; // switched off, or nothing sent yet (the initial window applies anyway)
    }
    CwndRestartInput in;
    in.cwnd_bytes = s.cwnd;
    in.ssthresh_bytes = s.ssthresh;
    in.initial_cwnd_bytes = s.tcp.initial_cwnd_bytes;
    in.segment_bytes = s.tcp.mss_bytes;
    in.idle_s = (now - s.sendEnd).GetSeconds();
    in.rto_s = s.srtt + kMinRtoSeconds; // see the file comment
    const CwndRestartResult out = CwndAfterIdle(in);
    if (!out.restarted)
    {
        return;
    }
    s.cwnd = out.cwnd_bytes;
    s.ssthresh = out.ssthresh_bytes;
    s.slowStart = s.cwnd < s.ssthresh;
}

void
FlowNetwork::Update()
{
    if (m_updating)
    {
        return;
    }
    m_updating = true;
    const ns3::Time now = ns3::Simulator::Now();
    Advance(now);
    const std::vector<uint32_t> active = m_active.ids(); // Process may make a stream idle
    for (uint32_t id : active)
    {
        Process(id, now);
    }
    if (m_dirty)
    {
        m_dirty = false;
        Reallocate(now);
    }
    ScheduleNext(now);
    m_updating = false;
    // Handlers may send (and so re-enter Update): run them on a consistent state.
    std::vector<std::function<void()>> deferred;
    deferred.swap(m_deferred);
    for (auto& handler : deferred)
    {
        handler();
    }
}

void
FlowNetwork::Advance(ns3::Time now)
{
    const double dt = (now - m_lastAdvance).GetSeconds();
    m_lastAdvance = now;
    if (dt <= 0)
    {
        return;
    }
    for (uint32_t id : m_active.ids())
    {
        Stream& s = m_streams[id];
        s.sentBytes = std::min(s.queuedEnd, s.sentBytes + s.rate * dt);
    }
}

void
FlowNetwork::Process(uint32_t id, ns3::Time now)
{
    Stream& s = m_streams[id];
    // Events land on whole nanoseconds, so a boundary may be missed by a fraction of a byte.
    const double eps = 1e-6 + 1e-12 * s.queuedEnd;
    if (s.sentBytes + eps >= s.queuedEnd)
    {
        s.sentBytes = s.queuedEnd;
    }
    if (s.cutPending && now >= s.cutAt)
    {
        if (!s.roundOn)
        {
            Acknowledge(s, false, now, now);
        }
        FoundLoss(s);
        m_dirty = true;
    }
    if (!s.roundOn && SharedGrowthDue(s) <= eps)
    {
        Acknowledge(s, false, now, now); // a window acknowledged while the share binds
        m_dirty = true;
    }
    if (s.rtoPending && now >= s.rtoAt)
    {
        ApplyTimeout(s, now);
        m_dirty = true;
    }
    // Drawn losses first: a lost segment holds back the frames that end after it.
    while (s.draws && s.sentBytes + eps >= s.nextLossAt && s.nextLossAt < s.queuedEnd)
    {
        if (!s.roundOn)
        {
            Acknowledge(s, false, now, now);
        }
        DrawnLoss(s, now);
        m_dirty = true;
    }
    while (!s.queue.empty() && s.queue.front().first <= s.sentBytes + eps)
    {
        const double end = s.queue.front().first;
        Frame frame = std::move(s.queue.front().second);
        s.queue.pop_front();
        const ns3::Time arrival = ArrivalOf(s, end, now);
        s.lastArrival = arrival;
        if (s.sent && !frame.internal)
        {
            m_deferred.push_back([handler = s.sent, meta = frame]() { handler(meta); });
        }
        s.inFlight.push_back(std::move(frame));
        ns3::Simulator::ScheduleWithContext(s.context, arrival - now, &FlowNetwork::Arrive,
                                            ns3::Ptr<FlowNetwork>(this), id);
    }
    while (!s.draws && s.sentBytes + eps >= s.nextLossAt)
    {
        // An expected loss: slow start ends and the window shrinks towards the mean window
        // under loss, never growing (a window below it, after a restart, stays put). As in
        // Linux, ssthresh is the window after the cut.
        if (!s.roundOn)
        {
            Acknowledge(s, false, now, now);
        }
        CutWindow(s);
        s.nextLossAt += LossEventSpacing(s.tcp, s.rate, std::min(s.cwnd, s.tcp.window_bytes));
        m_dirty = true;
    }
    if (s.queue.empty())
    {
        // Idle. The last round's ACKs still grow the window and give their RTT samples;
        // RestartAfterIdle applies when bytes come again. A loss event not yet found is found
        // by them: its cut comes now, before any restart (the stream is not visited while idle).
        Acknowledge(s, s.roundOn, s.roundSpent ? s.roundSpentAt : now, now);
        if (s.cutPending)
        {
            FoundLoss(s);
        }
        s.prevRoundBytes = 0;
        s.followsDoubling = false;
        s.sendEnd = now;
        s.active = false;
        m_active.Erase(id);
        m_wentIdle.Insert(id);
        s.roundOn = false;
        s.rate = 0;
        m_dirty = true;
        return;
    }
    if (s.roundOn && !s.roundSpent && s.sentBytes - s.roundStartSent + eps >= s.roundWindow)
    {
        s.roundSpent = true; // the window is out: wait for its ACKs
        s.roundSpentAt = now;
        m_dirty = true;
    }
    if (s.roundOn && now >= s.roundEnd)
    {
        // The round's bytes are acknowledged: byte counting grows the window by them.
        const bool windowBound = s.roundSpent || s.rate * s.tcp.rtt_s >= s.roundWindow;
        s.followsDoubling = s.roundSlowStart;
        const double roundBytes = s.sentBytes - s.ackedMark;
        Acknowledge(s, s.roundSpent, s.roundSpentAt, now);
        const bool cwndLimited = s.roundSpent && s.roundWindow >= s.cwnd * (1 - 1e-9);
        if ((s.tcp.loss > 0 || s.hystart.Found()) && !s.slowStart && !s.roundLoss)
        {
            // Congestion avoidance after a loss or HyStart's exit: the variant's growth,
            // counted in the rounds that sent (idle time is not CUBIC's t, as in Linux),
            // applied only while cwnd is the limit (Linux's tcp_is_cwnd_limited).
            s.epochS += s.tcp.rtt_s;
            if (cwndLimited)
            {
                s.cwnd = CongestionAvoidanceNext(s);
            }
        }
        if (windowBound)
        {
            StartRound(s, now);
            s.prevRoundBytes = roundBytes; // still being acknowledged as the next round sends
        }
        else
        {
            s.roundOn = false; // the fair share binds; growth is credited at re-sharing
            s.prevRoundBytes = 0;
        }
        m_dirty = true;
    }
}

void
FlowNetwork::Reallocate(ns3::Time now)
{
    ++m_reallocations;
    // Only streams that started, stopped or changed their cap are handed to the allocator, which
    // re-solves just the links they share (incremental-max-min.h): the same rates as a full
    // re-share, without its cost on every event.
    // Streams that are neither active nor just went idle are not in the allocator: visiting the
    // two sets in ascending id order makes the same calls as visiting every stream.
    std::vector<uint32_t> visit;
    visit.reserve(m_active.ids().size() + m_wentIdle.ids().size());
    std::set_union(m_active.ids().begin(), m_active.ids().end(), m_wentIdle.ids().begin(),
                   m_wentIdle.ids().end(), std::back_inserter(visit));
    m_wentIdle.Clear();
    for (uint32_t id : visit)
    {
        Stream& s = m_streams[id];
        if (!s.active)
        {
            m_fair.Remove(id);
            continue;
        }
        if (!s.roundOn)
        {
            Acknowledge(s, false, now, now); // growth while the fair share bound, at its rate
        }
        const double cap = Cap(s);
        if (!m_fair.Has(id) || cap != s.cap)
        {
            s.cap = cap;
            m_fair.Set(id, {s.links, s.cap, s.tcp.wire_factor});
        }
    }
    for (uint32_t id : m_fair.Reshare())
    {
        m_streams[id].rate = m_fair.Rate(id);
    }
    for (uint32_t id : m_active.ids())
    {
        Stream& s = m_streams[id];
        const double window = std::min(s.cwnd, s.tcp.window_bytes);
        if (!s.roundOn && s.rate * s.tcp.rtt_s >= window * (1 - 1e-9))
        {
            StartRound(s, now); // the share now covers the window: it binds again
        }
    }
}

void
FlowNetwork::ScheduleNext(ns3::Time now)
{
    double best = std::numeric_limits<double>::infinity();
    for (uint32_t id : m_active.ids())
    {
        const Stream& s = m_streams[id];
        if (s.rate > 0)
        {
            best = std::min(best, (s.queue.front().first - s.sentBytes) / s.rate);
            if (std::isfinite(s.nextLossAt))
            {
                best = std::min(best, (s.nextLossAt - s.sentBytes) / s.rate);
            }
            if (s.roundOn && !s.roundSpent)
            {
                const double left = s.roundWindow - (s.sentBytes - s.roundStartSent);
                best = std::min(best, left / s.rate);
            }
            if (!s.roundOn)
            {
                best = std::min(best, SharedGrowthDue(s) / s.rate);
            }
        }
        if (s.roundOn)
        {
            best = std::min(best, (s.roundEnd - now).GetSeconds());
        }
        if (s.rtoPending)
        {
            best = std::min(best, std::max(0.0, (s.rtoAt - now).GetSeconds()));
        }
        if (s.cutPending)
        {
            best = std::min(best, std::max(0.0, (s.cutAt - now).GetSeconds()));
        }
    }
    m_next.Cancel();
    if (std::isfinite(best))
    {
        const auto ns = static_cast<int64_t>(std::ceil(std::max(0.0, best) * 1e9));
        m_next = ns3::Simulator::Schedule(ns3::NanoSeconds(ns), &FlowNetwork::Update,
                                          ns3::Ptr<FlowNetwork>(this));
    }
}

void
FlowNetwork::CutWindow(Stream& s)
{
    s.slowStart = false;
    s.lastCut = WindowAfterLoss(s.tcp, s.cwnd, s.lastCut.w_max_bytes);
    s.renoEst = 0; // a new epoch
    s.cwnd = s.lastCut.cwnd_bytes;
    s.lossSeen = true;
    s.epochS = 0;
    s.ssthresh = s.cwnd;
    s.roundLoss = true;
    s.sharedAcked = 0;
    if (s.roundOn)
    {
        s.roundWindow = std::min(s.roundWindow, std::min(s.cwnd, s.tcp.window_bytes));
    }
}

void
FlowNetwork::DrawnLoss(Stream& s, ns3::Time now)
{
    const double mss = s.tcp.mss_bytes;
    const double lost = s.nextLossAt;
    ++s.counts.lost;
    // The repair (tcp-flow-model.h): found by the SACKs of the segments queued behind it, or by
    // the tail loss probe; lost again with probability p, each time after an RTO.
    const double after = std::max(0.0, std::ceil((s.queuedEnd - lost - mss) / mss - 1e-9));
    const double segmentS = s.rate > 0 ? mss / s.rate : 0.0;
    if (after < 1)
    {
        ++s.counts.probes;
    }
    const double delay = RepairDelaySeconds(s.tcp, s.srtt, after, segmentS);
    ns3::Time repair = now + ns3::Seconds(delay);
    double rto = LinuxRtoSeconds(s.srtt);
    // Segments still to leave behind the repair: RACK finds a lost repair by their SACKs as it
    // found the segment (a round trip and a reordering window later); with fewer than three,
    // only the RTO does.
    double behind = after - (segmentS > 0 ? delay / segmentS : 0.0);
    while (Uniform(s.rng) <= s.tcp.loss)
    {
        if (behind >= 3)
        {
            repair += ns3::Seconds(s.tcp.rtt_s * 1.25);
            behind -= segmentS > 0 ? s.tcp.rtt_s * 1.25 / segmentS : 0.0;
            continue;
        }
        if (!s.rtoPending)
        {
            s.rtoPending = true;
            s.rtoAt = repair + ns3::Seconds(rto);
            s.rtoHole = lost;
        }
        ++s.counts.timeouts;
        repair += ns3::Seconds(rto);
        rto *= 2; // Linux's backoff
    }
    s.holes.emplace_back(lost, repair + ns3::Seconds(s.tcp.tail_s));
    if (lost >= s.recoveryEnd && !s.cutPending)
    {
        // A new loss event: its cut (as an expected loss's) when the sender finds it, as its
        // repair leaves (FoundLoss).
        s.cutPending = true;
        s.cutAt = now + ns3::Seconds(delay);
    }
    s.nextLossAt = lost + SegmentsToNextLoss(s.rng, s.tcp.loss) * mss;
}

void
FlowNetwork::FoundLoss(Stream& s)
{
    s.cutPending = false;
    s.recoveryEnd = s.sentBytes; // Linux's high_seq: snd_nxt on entering recovery
    CutWindow(s);
}

void
FlowNetwork::ApplyTimeout(Stream& s, ns3::Time now)
{
    s.rtoPending = false;
    if (s.active)
    {
        Acknowledge(s, s.roundOn && s.roundSpent, s.roundSpent ? s.roundSpentAt : now, now);
    }
    // Linux's tcp_enter_loss in recovery: ssthresh stays the cut's, cwnd one segment; CUBIC's
    // state is reset (bictcp_reset), so its curve starts again at ssthresh with K = 0. The
    // retransmission's ACK then acknowledges everything sent behind the hole at once, and slow
    // start counts it: cwnd one segment plus those bytes, at most ssthresh (tcp_slow_start).
    s.cwnd = std::min(s.cwnd, s.tcp.mss_bytes + std::max(0.0, s.sentBytes - s.rtoHole));
    s.slowStart = s.cwnd < s.ssthresh;
    s.lastCut = LossCut{s.ssthresh, s.ssthresh, 0};
    s.epochS = 0;
    s.renoEst = 0;
    s.recoveryEnd = s.sentBytes; // losses sent before the timeout belong to it
    if (s.active)
    {
        StartRound(s, now);
    }
}

ns3::Time
FlowNetwork::ArrivalOf(Stream& s, double end, ns3::Time now)
{
    ns3::Time arrival = std::max(s.lastArrival, now + ns3::Seconds(s.tcp.tail_s));
    while (!s.holes.empty() && s.holes.front().first < end)
    {
        arrival = std::max(arrival, s.holes.front().second);
        s.holes.pop_front();
    }
    return arrival;
}

void
FlowNetwork::Arrive(uint32_t id)
{
    Stream& s = m_streams[id];
    if (s.inFlight.empty())
    {
        return; // disposed
    }
    Frame frame = std::move(s.inFlight.front());
    s.inFlight.pop_front();
    if (s.arrived)
    {
        s.arrived(frame);
    }
}

} // namespace hilosim

#include "sim/net/flow/tcp-flow-model.h"

#include "ns3/abort.h"
#include "ns3/tcp-bic.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-linux-reno.h"
#include "ns3/tcp-scalable.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hilosim
{
namespace
{

// Wire bytes of a SYN (IPv4, TCP with its options, PPP header) and of a pure ACK.
constexpr double kSynWireBytes = 62;
constexpr double kAckWireBytes = kSegmentOverheadBytes;
// CUBIC's C (RFC 9438 section 4.1; Linux's bic_scale 41 x 10 / 1024), segments / s^3.
constexpr double kCubicC = 0.4;

double
SerializationSeconds(double bytes, const LinkSpec& link)
{
    return bytes * 8.0 / static_cast<double>(link.rate.GetBitRate());
}

struct FlowVariant
{
    const char* name;
    ns3::TypeId type;
    double beta;
    bool cubic; // CUBIC's loss response; else AIMD(1, beta)
};

// ns-3's defaults: TcpCubic Beta 0.7, TcpBic Beta 0.8, TcpScalable's multiplicative decrease
// 1/8; NewReno and Linux Reno halve.
std::vector<FlowVariant>
Variants()
{
    // BIC and Scalable grow faster than one segment per round trip: AIMD(1, beta) is a lower
    // bound of their loss response.
    return {{"cubic", ns3::TcpCubic::GetTypeId(), 0.7, true},
            {"newreno", ns3::TcpNewReno::GetTypeId(), 0.5, false},
            {"linuxreno", ns3::TcpLinuxReno::GetTypeId(), 0.5, false},
            {"bic", ns3::TcpBic::GetTypeId(), 0.8, false},
            {"scalable", ns3::TcpScalable::GetTypeId(), 0.875, false}};
}

std::optional<FlowVariant>
FindVariant(ns3::TypeId congestionControl)
{
    for (const FlowVariant& v : Variants())
    {
        if (v.type == congestionControl)
        {
            return v;
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<double>
FlowModelBeta(ns3::TypeId congestionControl)
{
    const std::optional<FlowVariant> v = FindVariant(congestionControl);
    return v ? std::optional<double>(v->beta) : std::nullopt;
}

std::vector<std::string>
FlowModelVariants()
{
    std::vector<std::string> names;
    for (const FlowVariant& v : Variants())
    {
        names.emplace_back(v.name);
    }
    return names;
}

double
LossEventRate(double p, double windowSegments)
{
    NS_ABORT_MSG_IF(!(p > 0 && p < 1), "LossEventRate: loss " << p << " outside (0, 1)");
    const double w = std::max(1.0, windowSegments);
    const double lossyRound = -std::expm1(w * std::log1p(-p)); // 1 - (1 - p)^w
    // One cut per lossy round, then a round of recovery: w (1 + 1 / lossyRound) segments apart.
    return lossyRound / (w * (1.0 + lossyRound));
}

double
LossResponseAlpha(double beta, bool cubic)
{
    return cubic ? 3.0 * (1.0 - beta) / (1.0 + beta) : 1.0;
}

double
SteadyWindowSegments(double beta, bool cubic, double rttS, double lossEvents)
{
    NS_ABORT_MSG_IF(!(lossEvents > 0) || !(beta > 0 && beta < 1),
                    "SteadyWindowSegments: needs a positive loss-event rate and beta in (0, 1)");
    // AIMD(alpha, beta)'s sawtooth from beta W to W, alpha segments per round trip, one event
    // per cycle: (1 + beta) / 2 W (1 - beta) W / alpha = 1 / pe segments per cycle.
    const double alpha = LossResponseAlpha(beta, cubic);
    const double aimd = std::sqrt(alpha * (1.0 + beta) / (2.0 * (1.0 - beta) * lossEvents));
    if (!cubic)
    {
        return aimd;
    }
    const double curve = std::pow(kCubicC * (3.0 + beta) / (4.0 * (1.0 - beta)), 0.25) *
                         std::pow(rttS / lossEvents, 0.75);
    return std::max(aimd, curve);
}

double
LossThroughputBytesPerSecond(const TcpFlowParams& params)
{
    const double p = params.loss;
    NS_ABORT_MSG_IF(!(p > 0 && p < 1), "LossThroughput: loss " << p << " outside (0, 1)");
    NS_ABORT_MSG_IF(params.rtt_s <= 0, "LossThroughput: the round trip must be positive");
    const double maxWindow = params.window_bytes / params.mss_bytes;
    auto window = [&](double lossEvents)
    {
        return std::min(maxWindow,
                        SteadyWindowSegments(params.beta, params.cubic, params.rtt_s, lossEvents));
    };
    // W(pe) falls with pe and pe(W) falls with W: from pe = p the iterates rise monotonically
    // to the fixed point.
    double lossEvents = p;
    for (int i = 0; i < 200; ++i)
    {
        const double next = LossEventRate(p, window(lossEvents));
        const bool settled = std::abs(next - lossEvents) <= 1e-14 * lossEvents;
        lossEvents = next;
        if (settled)
        {
            break;
        }
    }
    const double w = window(lossEvents);
    const double rto = params.rtt_s + kMinRtoSeconds;
    const double backoff =
        1 + p * (1 + p * (2 + p * (4 + p * (8 + p * (16 + p * 32))))); // Padhye's f(p)
    const double timeoutSecondsPerSegment = lossEvents * p * rto * backoff / (1 - p);
    return params.mss_bytes / (params.rtt_s / w + timeoutSecondsPerSegment);
}

LossCut
WindowAfterLoss(const TcpFlowParams& params, double cwndBytes, double wMaxBytes)
{
    LossCut cut;
    cut.w_max_bytes = cwndBytes < wMaxBytes ? cwndBytes * (1.0 + params.beta) / 2.0 : cwndBytes;
    cut.cwnd_bytes = std::min(cwndBytes, std::max(2.0 * params.mss_bytes, params.beta * cwndBytes));
    cut.k_s =
        std::cbrt(std::max(0.0, cut.w_max_bytes - cut.cwnd_bytes) / params.mss_bytes / kCubicC);
    return cut;
}

double
WindowAfterLossFreeRound(const TcpFlowParams& params, double cwndBytes, const LossCut& cut,
                         double epochS)
{
    const double additive =
        cwndBytes + LossResponseAlpha(params.beta, params.cubic) * params.mss_bytes;
    if (!params.cubic)
    {
        return additive;
    }
    const double ahead = epochS + params.rtt_s - cut.k_s;
    const double curve = cut.w_max_bytes + kCubicC * ahead * ahead * ahead * params.mss_bytes;
    return std::max(additive, std::min(curve, 1.5 * cwndBytes));
}

double
SmoothedRttAfter(double srttS, double fromS, double lastS, double samples)
{
    NS_ABORT_MSG_IF(!(samples >= 1), "SmoothedRttAfter: needs at least one sample");
    // s_i = s_{i-1} + g (x_i - s_{i-1}) on x_i = from + i d trails the ramp by L = d (1 - g) / g
    // once settled, and the distance from that settles by (1 - g) per sample.
    constexpr double keep = 7.0 / 8.0; // 1 - g, Linux's gain g = 1/8
    const double step = (lastS - fromS) / samples;
    const double lag = step * keep / (1.0 - keep);
    return lastS - lag + (srttS - fromS + lag) * std::pow(keep, samples);
}

double
LinuxRtoSeconds(double srttS)
{
    return srttS + kMinRtoSeconds;
}

double
RepairDelaySeconds(const TcpFlowParams& params, double srttS, double segmentsAfter, double segmentS)
{
    constexpr double kDupThresh = 3; // Linux's tp->reordering default
    if (segmentsAfter >= kDupThresh)
    {
        return params.rtt_s + kDupThresh * segmentS;
    }
    if (segmentsAfter >= 1)
    {
        return params.rtt_s + segmentsAfter * segmentS + params.rtt_s / 4;
    }
    return params.rtt_s + std::min(2 * srttS + kMinRtoSeconds, LinuxRtoSeconds(srttS));
}

TcpFlowParams
TcpFlowParamsFor(const std::vector<const LinkSpec*>& route, const SocketOptions& options)
{
    NS_ABORT_MSG_IF(route.empty(), "TcpFlowParamsFor: empty route");
    TcpFlowParams t;
    t.mss_bytes = options.segment_bytes;
    const double segmentWire = t.mss_bytes + kSegmentOverheadBytes;
    t.wire_factor = segmentWire / t.mss_bytes;
    double propagation = 0;
    double segmentHops = 0;
    double ackHops = 0;
    double synHops = 0;
    double slowest = 0;
    double delivered = 1.0;
    for (const LinkSpec* link : route)
    {
        propagation += link->delay.GetSeconds();
        segmentHops += SerializationSeconds(segmentWire, *link);
        ackHops += SerializationSeconds(kAckWireBytes, *link);
        synHops += SerializationSeconds(kSynWireBytes, *link);
        slowest = std::max(slowest, SerializationSeconds(segmentWire, *link));
        delivered *= 1.0 - link->loss_rate;
    }
    t.rtt_s = 2 * propagation + segmentHops + ackHops;
    t.handshake_rtt_s = 2 * (propagation + synHops);
    // The fluid sender releases the last segment one bottleneck serialization before its last
    // byte; store and forward then costs one serialization per hop.
    t.tail_s = propagation + segmentHops - slowest;
    // The bottleneck's queue (the smallest of the slowest links'), as PathInfo counts it.
    double queueS = std::numeric_limits<double>::infinity();
    for (const LinkSpec* link : route)
    {
        if (SerializationSeconds(segmentWire, *link) >= slowest * (1 - 1e-12))
        {
            queueS = std::min(queueS, link->queue_packets * slowest);
        }
    }
    t.queue_s = queueS;
    t.window_bytes = options.send_buffer_bytes;
    t.initial_cwnd_bytes = kInitialCwndSegments * t.mss_bytes;
    t.loss = 1.0 - delivered;
    const std::optional<FlowVariant> variant = FindVariant(options.congestion_control);
    NS_ABORT_MSG_IF(!variant, "TcpFlowParamsFor: the flow model cannot model "
                                  << options.congestion_control.GetName());
    t.beta = variant->beta;
    t.cubic = variant->cubic;
    t.restart_after_idle = options.restart_after_idle;
    return t;
}

double
SlowStartTransferSeconds(const TcpFlowParams& params, double goodputBps, double bytes,
                         double cwndBytes)
{
    NS_ABORT_MSG_IF(goodputBps <= 0 || params.rtt_s <= 0,
                    "SlowStartTransferSeconds: rate and RTT must be positive");
    double t = 0;
    double left = bytes;
    double cwnd = cwndBytes;
    while (left > 0)
    {
        const double window = std::min(cwnd, params.window_bytes);
        if (window >= goodputBps * params.rtt_s)
        {
            t += left / goodputBps; // the window covers the path: the link rate from now on
            break;
        }
        // The round's window leaves at once (unpaced), then its ACKs come back one round trip
        // after the round began.
        if (left <= window)
        {
            t += left / goodputBps;
            break;
        }
        left -= window;
        t += params.rtt_s;
        cwnd += window; // acknowledged bytes grow the window (byte counting)
    }
    return t + params.tail_s;
}

} // namespace hilosim

#include "sim/net/flow/tcp-flow-model.h"

#include "ns3/abort.h"
#include "ns3/tcp-bic.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-linux-reno.h"
#include "ns3/tcp-scalable.h"

#include <algorithm>
#include <cmath>

namespace hilosim
{
namespace
{

// Wire bytes of a SYN (IPv4, TCP with its options, PPP header) and of a pure ACK.
constexpr double kSynWireBytes = 62;
constexpr double kAckWireBytes = kSegmentOverheadBytes;
// ns-3's TcpSocket::DelAckCount default: segments acknowledged per ACK.
constexpr double kSegmentsPerAck = 2;

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
};

// ns-3's defaults: TcpCubic Beta 0.7, TcpBic Beta 0.8, TcpScalable's multiplicative decrease
// 1/8; NewReno and Linux Reno halve.
std::vector<FlowVariant>
Variants()
{
    return {{"cubic", ns3::TcpCubic::GetTypeId(), 0.7},
            {"newreno", ns3::TcpNewReno::GetTypeId(), 0.5},
            {"linuxreno", ns3::TcpLinuxReno::GetTypeId(), 0.5},
            {"bic", ns3::TcpBic::GetTypeId(), 0.8},
            {"scalable", ns3::TcpScalable::GetTypeId(), 0.875}};
}

} // namespace

std::optional<double>
FlowModelBeta(ns3::TypeId congestionControl)
{
    for (const FlowVariant& v : Variants())
    {
        if (v.type == congestionControl)
        {
            return v.beta;
        }
    }
    return std::nullopt;
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
PadhyeThroughputBytesPerSecond(double mssBytes, double rttS, double p, double b, double t0S,
                               double wmaxBytes)
{
    NS_ABORT_MSG_IF(!(p > 0 && p < 1), "PadhyeThroughput: loss " << p << " outside (0, 1)");
    const double denominator =
        rttS * std::sqrt(2.0 * b * p / 3.0) +
        t0S * std::min(1.0, 3.0 * std::sqrt(3.0 * b * p / 8.0)) * p * (1.0 + 32.0 * p * p);
    const double segmentsPerSecond = 1.0 / denominator;
    const double windowLimit = rttS > 0 ? wmaxBytes / rttS : segmentsPerSecond * mssBytes;
    return std::min(segmentsPerSecond * mssBytes, windowLimit);
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
    t.window_bytes = options.send_buffer_bytes;
    t.initial_cwnd_bytes = kInitialCwndSegments * t.mss_bytes;
    t.loss = 1.0 - delivered;
    const std::optional<double> beta = FlowModelBeta(options.congestion_control);
    NS_ABORT_MSG_IF(!beta, "TcpFlowParamsFor: the flow model cannot model "
                               << options.congestion_control.GetName());
    t.beta = *beta;
    t.restart_after_idle = options.restart_after_idle;
    if (t.loss > 0)
    {
        const double t0 = std::max(kMinRtoSeconds, 2 * t.rtt_s);
        t.loss_rate_Bps = PadhyeThroughputBytesPerSecond(t.mss_bytes, t.rtt_s, t.loss,
                                                         kSegmentsPerAck, t0, t.window_bytes);
    }
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

#include "sim/net/hystart.h"

#include <algorithm>

namespace hilosim
{

namespace
{
constexpr double kGsoMaxBytes = 65536;       // GSO_MAX_SIZE, what sk_gso_max_size defaults to
constexpr int64_t kDelayThreshMinUs = 4000;  // HYSTART_DELAY_MIN
constexpr int64_t kDelayThreshMaxUs = 16000; // HYSTART_DELAY_MAX

// Sequence number `a` after `b`, modulo 2^32 (Linux's after()).
bool
After(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>(a - b) > 0;
}
} // namespace

ns3::Time
HyStart::AckDelay(double pacingRateBytesPerSecond)
{
    if (!(pacingRateBytesPerSecond > 0))
    {
        return ns3::Time(0);
    }
    const double us = 4 * kGsoMaxBytes * 1e6 / pacingRateBytesPerSecond;
    return ns3::MicroSeconds(static_cast<int64_t>(std::min(1000.0, us)));
}

ns3::Time
HyStart::DelayThreshold(ns3::Time delayMin)
{
    return ns3::MicroSeconds(
        std::clamp<int64_t>(delayMin.GetMicroSeconds() / 8, kDelayThreshMinUs, kDelayThreshMaxUs));
}

void
HyStart::Reset(ns3::Time now, uint32_t sndNxt)
{
    m_started = true;
    m_roundStart = now;
    m_lastAck = now;
    m_endSeq = sndNxt;
    m_currRtt = ns3::Time(0);
    m_sampleCount = 0;
}

void
HyStart::Restart(ns3::Time now, uint32_t sndNxt)
{
    m_found = false;
    m_delayMin = ns3::Time(0);
    Reset(now, sndNxt);
}

bool
HyStart::OnAck(const HyStartAck& ack)
{
    if (!ack.rtt.IsStrictlyPositive())
    {
        return false; // bictcp_acked: no RTT sample
    }
    if (m_delayMin.IsZero() || ack.rtt < m_delayMin)
    {
        m_delayMin = ack.rtt;
    }
    if (m_found || !ack.in_slow_start)
    {
        return false;
    }
    // Rounds are tracked from the first ACK on, below the low window too (hystart_update's
    // first test, before its low-window test): so each round starts at the first ACK of a
    // burst, where the queue the previous burst built has drained.
    if (!m_started || After(ack.snd_una, m_endSeq))
    {
        Reset(ack.now, ack.snd_nxt);
    }
    if (ack.cwnd_segments < kLowWindowSegments)
    {
        return false;
    }
    // ACK train.
    if ((ack.now - m_lastAck).GetMicroSeconds() <= HyStart::kAckDeltaUs)
    {
        m_lastAck = ack.now;
        ns3::Time threshold = m_delayMin + AckDelay(ack.pacing_rate_Bps);
        if (!ack.paced)
        {
            threshold = threshold / 2;
        }
        if (ack.now - m_roundStart > threshold)
        {
            m_found = true;
            ++m_trainExits;
            return true;
        }
    }
    // Delay increase.
    if (m_currRtt.IsZero() || ack.rtt < m_currRtt)
    {
        m_currRtt = ack.rtt;
    }
    if (m_sampleCount < kMinSamples)
    {
        ++m_sampleCount;
    }
    else if (m_currRtt > m_delayMin + DelayThreshold(m_delayMin))
    {
        m_found = true;
        ++m_delayExits;
        return true;
    }
    return false;
}

} // namespace hilosim

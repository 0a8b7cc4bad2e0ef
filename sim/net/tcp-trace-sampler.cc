#include "sim/net/tcp-trace-sampler.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

namespace hilosim
{

TcpTraceSampler::TcpTraceSampler(std::string arm, ns3::Time period)
  : m_period(period)
  , m_recorder(std::move(arm))
{
    NS_ABORT_MSG_IF(!period.IsStrictlyPositive(), "TcpTraceSampler: the period must be > 0");
}

TcpTraceSampler::~TcpTraceSampler()
{
    m_event.Cancel();
}

void
TcpTraceSampler::Watch(ns3::Ptr<MessageTransport> transport)
{
    m_transports.push_back(transport);
}

void
TcpTraceSampler::Start()
{
    m_event = ns3::Simulator::ScheduleNow(&TcpTraceSampler::Sample, this);
}

void
TcpTraceSampler::Sample()
{
    const double now_s = ns3::Simulator::Now().GetSeconds();
    const double period_s = m_period.GetSeconds();
    for (const auto& transport : m_transports)
    {
        const uint32_t node = transport->GetLocalId();
        const std::string name = TcpTraceNodeName(node);
        for (TcpTraceSample s : transport->SampleTcp())
        {
            if (!s.delivery_rate_bps && s.bytes_acked)
            {
                // The first sample of a connection has no previous period: its rate counts
                // from 0 bytes over one period (it opened within it).
                uint64_t& last = m_lastAcked[{node, s.peer}];
                s.delivery_rate_bps = static_cast<double>(*s.bytes_acked - last) * 8 / period_s;
                last = *s.bytes_acked;
            }
            m_recorder.Add(now_s, name, s);
        }
    }
    // Nothing else to come: the run is over (a sampler alone must not keep it going).
    if (!ns3::Simulator::IsFinished())
        m_event = ns3::Simulator::Schedule(m_period, &TcpTraceSampler::Sample, this);
}

} // namespace hilosim

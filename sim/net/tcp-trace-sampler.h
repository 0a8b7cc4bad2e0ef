// TcpTraceSampler: the simulator's side of the TCP trace (sim/net/tcp-trace.h). Every period of
// simulated time it reads each transport's connections (MessageTransport::SampleTcp: the packet
// model's sockets or the flow model's streams) and keeps a row per connection end whose state
// changed. It only reads: a run's other outputs are the same with and without it. The delivery
// rate of a sample that has none (the packet model) is the bytes acknowledged since the
// previous period over the period.
#ifndef HILOSIM_NET_TCP_TRACE_SAMPLER_H
#define HILOSIM_NET_TCP_TRACE_SAMPLER_H

#include "sim/net/message-transport.h"
#include "sim/net/tcp-trace.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hilosim
{

class TcpTraceSampler
{
  public:
    /// REQUIRES: period > 0.
    TcpTraceSampler(std::string arm, ns3::Time period);
    ~TcpTraceSampler();
    TcpTraceSampler(const TcpTraceSampler&) = delete;
    TcpTraceSampler& operator=(const TcpTraceSampler&) = delete;

    /// Samples `transport`'s connections, named by its peer id (TcpTraceNodeName).
    void Watch(ns3::Ptr<MessageTransport> transport);
    /// Schedules the first sample now (before Simulator::Run); then one every period while the
    /// simulation has other events.
    void Start();
    /// The rows so far, in time order (within a sample: transports in Watch order, peers
    /// ascending).
    std::vector<TcpTraceRow> TakeRows() { return m_recorder.TakeRows(); }

  private:
    void Sample();

    ns3::Time m_period;
    std::vector<ns3::Ptr<MessageTransport>> m_transports;
    TcpTraceRecorder m_recorder;
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_lastAcked; // by (node id, peer id)
    ns3::EventId m_event;
};

} // namespace hilosim

#endif // HILOSIM_NET_TCP_TRACE_SAMPLER_H

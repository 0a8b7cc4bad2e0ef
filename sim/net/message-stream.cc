#include "sim/net/message-stream.h"

#include "ns3/abort.h"

namespace hilosim
{

MessageStream::MessageStream(const FrameHeader& header, int64_t sentAtSteps, uint64_t chunkBytes)
  : m_header(header)
  , m_chunkBytes(chunkBytes)
{
    NS_ABORT_MSG_IF(chunkBytes == 0, "MessageStream: chunkBytes must be >= 1");
    m_header.sent_at_steps = sentAtSteps;
    m_header.AppendTo(&m_headerBytes);
    m_payload.reserve(m_header.payload_bytes);
}

void
MessageStream::Append(std::string_view payload, uint64_t padding)
{
    NS_ABORT_MSG_IF(m_aborted, "MessageStream::Append after Abort");
    NS_ABORT_MSG_IF(!payload.empty() && m_payload.size() + payload.size() > m_header.payload_bytes,
                    "MessageStream::Append: more payload than the header announced");
    NS_ABORT_MSG_IF(padding > 0 && m_payload.size() + payload.size() != m_header.payload_bytes,
                    "MessageStream::Append: padding before the whole payload");
    NS_ABORT_MSG_IF(m_arrived + payload.size() + padding > m_header.wire_bytes,
                    "MessageStream::Append: more bytes than the header announced");
    m_payload.append(payload);
    m_arrived += payload.size() + padding;
    if (IsComplete() || m_arrived - m_lastWake >= m_chunkBytes)
    {
        m_lastWake = m_arrived;
        Wake();
    }
}

void
MessageStream::Abort()
{
    if (m_aborted || IsComplete())
    {
        return;
    }
    m_aborted = true;
    Wake();
    m_waiters.clear(); // nothing more will happen: drop the forwarders' references
}

void
MessageStream::AddWaiter(std::function<void()> wake)
{
    m_waiters.push_back(std::move(wake));
}

void
MessageStream::Wake()
{
    // A waiter may add waiters (a peer that connects now); index, not iterators.
    for (size_t i = 0; i < m_waiters.size(); ++i)
    {
        m_waiters[i]();
    }
    if (IsComplete())
    {
        m_waiters.clear();
    }
}

} // namespace hilosim

#include "sim/net/message-frame.h"

#include "hilo/core/coding.h"

#include "ns3/nstime.h"

#include <algorithm>

namespace hilosim
{

MessageReassembler::MessageReassembler(uint64_t maxPayloadBytes)
  : m_maxPayloadBytes(maxPayloadBytes)
{
    m_header.reserve(FrameHeader::kBytes);
}

hilo::Status
MessageReassembler::Consume(ns3::Ptr<ns3::Packet> packet,
                            const std::function<void(Message&&)>& deliver, FrameObserver* observer)
{
    if (!m_error.ok())
    {
        return m_error;
    }
    while (packet->GetSize() > 0)
    {
        const uint32_t available = packet->GetSize();
        uint32_t used = 0;
        switch (m_stage)
        {
            case Stage::kHeader:
            {
                const size_t before = m_header.size();
                used = std::min<uint32_t>(available, FrameHeader::kBytes - before);
                m_header.resize(before + used);
                packet->CopyData(reinterpret_cast<uint8_t*>(&m_header[before]), used);
                if (m_header.size() == FrameHeader::kBytes)
                {
                    auto frame = FrameHeader::Parse(m_header, m_maxPayloadBytes);
                    if (!frame.ok())
                    {
                        m_error = frame.status();
                        return m_error;
                    }
                    m_frame = *frame;
                    m_header.clear();
                    m_message = Message();
                    m_message.type = m_frame.type;
                    m_message.wire_bytes = m_frame.wire_bytes;
                    m_message.sent_at = ns3::TimeStep(static_cast<uint64_t>(m_frame.sent_at_steps));
                    m_message.payload.reserve(m_frame.payload_bytes);
                    m_paddingLeft = m_frame.wire_bytes - m_frame.payload_bytes;
                    m_stage = Stage::kPayload;
                    if (observer != nullptr)
                    {
                        observer->FrameStarted(m_frame);
                    }
                }
                break;
            }
            case Stage::kPayload:
            {
                const size_t before = m_message.payload.size();
                used = static_cast<uint32_t>(
                    std::min<uint64_t>(available, m_frame.payload_bytes - before));
                m_message.payload.resize(before + used);
                packet->CopyData(reinterpret_cast<uint8_t*>(&m_message.payload[before]), used);
                if (observer != nullptr && used > 0)
                {
                    observer->FrameBytes(std::string_view(m_message.payload).substr(before), 0);
                }
                break;
            }
            case Stage::kPadding:
                used = static_cast<uint32_t>(std::min<uint64_t>(available, m_paddingLeft));
                m_paddingLeft -= used;
                if (observer != nullptr && used > 0)
                {
                    observer->FrameBytes(std::string_view(), used);
                }
                break;
        }
        packet->RemoveAtStart(used);
        m_streamBytes += used;
        // Advance through stages that are complete, including empty payload or padding.
        if (m_stage == Stage::kPayload && m_message.payload.size() == m_frame.payload_bytes)
        {
            m_stage = Stage::kPadding;
        }
        if (m_stage == Stage::kPadding && m_paddingLeft == 0)
        {
            m_stage = Stage::kHeader;
            deliver(std::move(m_message));
            m_message = Message();
        }
    }
    return hilo::Status::Ok();
}

} // namespace hilosim

#include "sim/drivers/process/frame-reader.h"

#include "hilo/core/crc32c.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace hilosim
{

FrameReader::FrameReader(FrameReaderOptions options)
  : m_options(std::move(options))
{
    m_options.payload_step_bytes = std::max<size_t>(1, m_options.payload_step_bytes);
}

uint64_t
FrameReader::frame_bytes() const
{
    if (m_phase == Phase::kHeader)
    {
        return m_headerHave;
    }
    return FrameHeader::kBytes + m_payloadHave +
           (m_phase == Phase::kPadding ? m_frame.wire_bytes - m_frame.payload_bytes - m_paddingLeft
                                       : 0);
}

FrameReader::Span
FrameReader::Buffer()
{
    if (!m_error.ok())
    {
        return {nullptr, 0};
    }
    switch (m_phase)
    {
        case Phase::kHeader:
            return {m_header + m_headerHave, FrameHeader::kBytes - m_headerHave};
        case Phase::kPayload:
        {
            std::string& last = m_pieces.back();
            const uint64_t before =
                m_payloadHave - (m_pieces.size() - 1) * m_options.payload_step_bytes;
            return {&last[before], last.size() - static_cast<size_t>(before)};
        }
        case Phase::kPadding:
            if (m_scratch.empty())
            {
                m_scratch.resize(kPaddingChunkBytes);
            }
            return {m_scratch.data(),
                    static_cast<size_t>(std::min<uint64_t>(m_paddingLeft, m_scratch.size()))};
    }
    return {nullptr, 0};
}

FrameReader::Event
FrameReader::Commit(size_t n)
{
    if (!m_error.ok())
    {
        return Event::kError;
    }
    switch (m_phase)
    {
        case Phase::kHeader:
            m_headerHave += n;
            return m_headerHave < FrameHeader::kBytes ? Event::kNeedMore : OnHeader();
        case Phase::kPayload:
            m_payloadHave += n;
            break;
        case Phase::kPadding:
            m_paddingLeft -= n;
            break;
    }
    if (m_phase == Phase::kPayload)
    {
        if (m_payloadHave == m_frame.payload_bytes)
        {
            m_phase = Phase::kPadding;
            m_paddingLeft = m_frame.wire_bytes - m_frame.payload_bytes;
        }
        else if (m_payloadHave == m_allocated)
        {
            // The piece is full: the next one is allocated now that its bytes are coming.
            const uint64_t n_next = std::min<uint64_t>(m_options.payload_step_bytes,
                                                       m_frame.payload_bytes - m_payloadHave);
            m_pieces.emplace_back(static_cast<size_t>(n_next), '\0');
            m_allocated += n_next;
        }
    }
    if (m_phase == Phase::kPadding && m_paddingLeft == 0)
    {
        return Finish();
    }
    return Event::kNeedMore;
}

FrameReader::Event
FrameReader::OnHeader()
{
    auto parsed =
        FrameHeader::Parse(std::string_view(m_header, FrameHeader::kBytes),
                           m_helloDone ? m_options.max_payload_bytes : kMaxHelloPayloadBytes);
    if (!parsed.ok())
    {
        return Fail(parsed.status());
    }
    m_frame = *parsed;
    const bool hello = m_frame.type == FrameHeader::kHelloType;
    if (m_helloDone == hello)
    {
        return Fail(
            hilo::Status::Corruption(hello ? "unexpected hello" : "message before the hello"));
    }
    if (hello && m_frame.wire_bytes != m_frame.payload_bytes)
    {
        return Fail(hilo::Status::Corruption(
            "malformed hello (" + std::to_string(m_frame.payload_bytes) + " payload bytes, " +
            std::to_string(m_frame.wire_bytes) + " wire bytes)"));
    }
    if (m_helloDone && m_frame.type == FrameHeader::kHeartbeatType && m_frame.wire_bytes != 0)
    {
        return Fail(hilo::Status::Corruption(
            "malformed heartbeat (" + std::to_string(m_frame.payload_bytes) + " payload bytes, " +
            std::to_string(m_frame.wire_bytes) + " wire bytes)"));
    }
    const auto& limit_of = m_options.max_payload_for;
    if (m_helloDone && limit_of && m_frame.payload_bytes > limit_of(m_frame.type))
    {
        return Fail(hilo::Status::Corruption(
            "a message of type " + std::to_string(m_frame.type) + " announces " +
            std::to_string(m_frame.payload_bytes) + " bytes; this node takes at most " +
            std::to_string(limit_of(m_frame.type)) + " of that type"));
    }
    m_pieces.clear();
    m_payloadHave = 0;
    m_allocated = 0;
    if (m_frame.payload_bytes > 0)
    {
        m_phase = Phase::kPayload;
        const uint64_t n = std::min<uint64_t>(m_options.payload_step_bytes, m_frame.payload_bytes);
        m_pieces.emplace_back(static_cast<size_t>(n), '\0');
        m_allocated = n;
        return Event::kNeedMore;
    }
    m_phase = Phase::kPadding;
    m_paddingLeft = m_frame.wire_bytes;
    return m_paddingLeft == 0 ? Finish() : Event::kNeedMore;
}

FrameReader::Event
FrameReader::Finish()
{
    if (m_pieces.size() == 1)
    {
        m_delivered = std::move(m_pieces[0]);
    }
    else
    {
        m_delivered.clear();
        m_delivered.reserve(static_cast<size_t>(m_frame.payload_bytes));
        for (const std::string& piece : m_pieces)
        {
            m_delivered += piece;
        }
    }
    m_pieces.clear();
    m_allocated = 0;
    m_payloadHave = 0;
    m_headerHave = 0;
    m_phase = Phase::kHeader;
    if (hilo::Crc32c(m_delivered.data(), m_delivered.size()) != m_frame.payload_crc)
    {
        m_delivered.clear();
        return Fail(hilo::Status::Corruption("message of type " + std::to_string(m_frame.type) +
                                             " with " + std::to_string(m_frame.payload_bytes) +
                                             " real bytes fails its CRC-32C"));
    }
    ++m_frames;
    return Event::kFrame;
}

std::string
FrameReader::TakePayload()
{
    return std::move(m_delivered);
}

FrameReader::Event
FrameReader::Fail(hilo::Status why)
{
    m_error = std::move(why);
    m_pieces.clear();
    m_allocated = 0;
    return Event::kError;
}

} // namespace hilosim

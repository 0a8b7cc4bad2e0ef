// MessageStream: one message being forwarded while it arrives (a streaming relay). The receiving
// connection appends the message's bytes as they come in; every connection that forwards it sends
// a frame whose header announces the whole message at once and whose payload and padding follow
// no faster than they arrive. A receiver downstream gets exactly the frame a Send of the complete
// message would have produced (same type, payload bytes and wire bytes), only earlier.
//
// Forwarding connections are woken when at least `chunkBytes` more bytes have arrived since the
// last wake-up, and when the message is complete: chunks bound the per-packet work of a relay with
// many workers, at the cost of at most one chunk's serialization on the next link.
#ifndef HILO_SIM_NET_MESSAGE_STREAM_H
#define HILO_SIM_NET_MESSAGE_STREAM_H

#include "sim/net/message-frame.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hilosim
{

class MessageStream
{
  public:
    /// The message announced by `header` (as it arrived; sent_at_steps is replaced by the
    /// forwarding time `sentAtSteps`). REQUIRES: chunkBytes >= 1.
    MessageStream(const FrameHeader& header, int64_t sentAtSteps, uint64_t chunkBytes);

    /// The 32 header bytes of the forwarded frame.
    const std::string& GetHeaderBytes() const { return m_headerBytes; }
    const FrameHeader& GetHeader() const { return m_header; }
    /// Header + wire bytes: the forwarded frame's size.
    uint64_t GetFrameBytes() const { return FrameHeader::kBytes + m_header.wire_bytes; }
    /// Frame bytes that may be sent now: the header and every byte that has arrived.
    uint64_t GetAvailableBytes() const { return FrameHeader::kBytes + m_arrived; }
    /// The real payload bytes that have arrived so far.
    std::string_view GetPayload() const { return m_payload; }
    bool IsComplete() const { return m_arrived == m_header.wire_bytes; }
    /// The message will never complete (its sender's connection ended mid-message).
    bool IsAborted() const { return m_aborted; }

    /// The receiving side: `payload` more real bytes, then `padding` more virtual ones.
    /// REQUIRES: no more than the header announced, payload before padding, not aborted.
    void Append(std::string_view payload, uint64_t padding);
    /// The receiving side: the rest will never come. Wakes every forwarder.
    void Abort();

    /// Calls `wake` whenever bytes become available (in chunks) and on completion or abort.
    void AddWaiter(std::function<void()> wake);

  private:
    void Wake();

    FrameHeader m_header;
    std::string m_headerBytes;
    uint64_t m_chunkBytes;
    std::string m_payload;
    uint64_t m_arrived{0};  // payload + padding bytes arrived
    uint64_t m_lastWake{0}; // m_arrived at the last wake-up
    bool m_aborted{false};
    std::vector<std::function<void()>> m_waiters;
};

} // namespace hilosim

#endif // HILO_SIM_NET_MESSAGE_STREAM_H

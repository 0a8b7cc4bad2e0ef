// The framing of messages on a TCP byte stream, and the receiver's reassembly.
//
// Stream format (all integers little-endian), one frame per message, frames back to back:
//
//   offset size  field
//   0      4     magic 0x464D4C48 ("HLMF")
//   4      4     type: application tag; 0xFFFFFFFF is reserved for the transport's hello
//   8      8     payload_bytes: real bytes that follow the header
//   16     8     wire_bytes: payload_bytes + virtual padding bytes that follow the payload
//   24     8     sent_at: sender's time at Send, in ns-3 time steps (signed; nanoseconds by
//                default) -- in processes, nanoseconds of the run's steady clock
//   32     payload_bytes real bytes, then wire_bytes - payload_bytes padding bytes
//
// The first frame on a connection is the connecting side's hello: type 0xFFFFFFFF, a 4-byte
// payload holding its u32 peer id.
//
// The header and the payload are real bytes in ns-3 packets; the padding is ns-3 "zero-area"
// payload (Create<Packet>(n)), which costs no memory and which the receiver counts, never stores.
// Between processes (sim/drivers/process/) the padding is real zero bytes, read and discarded.
// The header's 32 bytes travel in addition to wire_bytes: they are the transport's own overhead.
#ifndef HILO_SIM_NET_MESSAGE_FRAME_H
#define HILO_SIM_NET_MESSAGE_FRAME_H

#include "sim/net/frame-header.h"
#include "sim/net/message.h"

#include "hilo/core/status.h"

#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace hilosim
{

/// What a receiver that forwards messages while they arrive (a streaming relay) hears about
/// each frame, before and while its bytes arrive. Calls come in stream order, interleaved with
/// the deliveries of the whole messages.
class FrameObserver
{
  public:
    virtual ~FrameObserver() = default;
    /// A frame's header was parsed; its payload and padding follow.
    virtual void FrameStarted(const FrameHeader& header) = 0;
    /// More of the current frame arrived: `payload` real bytes (appended to those before), then
    /// `padding` virtual bytes. The frame is complete when all its bytes have come through here,
    /// just before it is delivered.
    virtual void FrameBytes(std::string_view payload, uint64_t padding) = 0;
};

/// Rebuilds messages from the packets of one TCP byte stream, whatever their boundaries.
class MessageReassembler
{
  public:
    explicit MessageReassembler(uint64_t maxPayloadBytes);

    /// Consumes every byte of `packet` (which it trims). For each message completed by these bytes,
    /// in stream order, calls `deliver` with its type, payload, wire_bytes and sent_at filled
    /// (sequence and received_at are the caller's). A bad frame header returns Corruption, and
    /// every later call returns it again. `observer`, if not null, hears of every frame's header
    /// and bytes as they arrive (before `deliver` for the same frame).
    hilo::Status Consume(ns3::Ptr<ns3::Packet> packet,
                         const std::function<void(Message&&)>& deliver,
                         FrameObserver* observer = nullptr);

    /// The frame now arriving (between its header and its last byte): the header, the payload
    /// bytes so far and the payload + padding bytes so far.
    const FrameHeader& GetCurrentFrame() const { return m_frame; }
    std::string_view GetCurrentPayload() const { return m_message.payload; }
    uint64_t GetCurrentArrived() const
    {
        return m_message.payload.size() +
               (m_frame.wire_bytes - m_frame.payload_bytes - m_paddingLeft);
    }
    /// Bytes consumed so far (headers, payload and padding).
    uint64_t GetStreamBytes() const { return m_streamBytes; }
    /// True between the first and the last byte of a frame.
    bool IsMidFrame() const { return m_stage != Stage::kHeader || !m_header.empty(); }

  private:
    enum class Stage
    {
        kHeader,
        kPayload,
        kPadding,
    };

    uint64_t m_maxPayloadBytes;
    Stage m_stage{Stage::kHeader};
    std::string m_header; // header bytes collected so far
    FrameHeader m_frame;  // parsed header of the current frame
    Message m_message;    // payload collected so far
    uint64_t m_paddingLeft{0};
    uint64_t m_streamBytes{0};
    hilo::Status m_error;
};

} // namespace hilosim

#endif // HILO_SIM_NET_MESSAGE_FRAME_H

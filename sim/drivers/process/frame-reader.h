// FrameReader: the inbound half of a TcpTransport connection without the socket. Bytes go in as
// they arrive (after the record layer, record-stream.h, when the connection is sealed); whole
// frames of the stream format (sim/net/message-frame.h: a 40-byte FrameHeader, the real payload,
// then wire_bytes - payload_bytes of padding read and discarded) come out, or an error that ends
// the connection.
//
// The limits, checked on the header before any byte of the payload is taken:
// - before the hello exchange is done (set_hello_done(false), the start) a frame must be of the
//   hello type, with no padding and at most kMaxHelloPayloadBytes: a peer is nobody yet;
// - after it, no hello frame; at most max_payload_bytes, and at most max_payload_for(type) when
//   that is set; a heartbeat (FrameHeader::kHeartbeatType) carries nothing at all (no payload,
//   no padding);
// - the payload's CRC-32C is checked once it is whole.
// Memory: the payload is held in pieces of at most payload_step_bytes, each allocated when the
// bytes before it have arrived, so at any moment the reader holds at most the payload bytes that
// arrived plus one step (a header announcing 2 GiB costs nothing until its bytes come); padding
// goes through one scratch piece of kPaddingChunkBytes. A whole payload of more than one step is
// joined into one string when it is delivered.
//
// Use: write at most Buffer().size() bytes to Buffer().data(), then Commit(n). After a kFrame,
// header() and TakePayload() give the frame until the next Commit; after a kError, error() says
// why and every later Commit fails the same way.
#ifndef HILOSIM_DRIVERS_PROCESS_FRAME_READER_H
#define HILOSIM_DRIVERS_PROCESS_FRAME_READER_H

#include "sim/drivers/process/peer-auth.h"
#include "sim/net/frame-header.h"

#include "hilo/core/status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hilosim
{

struct FrameReaderOptions
{
    uint64_t max_payload_bytes{(1ull << 31) - 1};           // any frame after the hello
    std::function<uint64_t(uint32_t type)> max_payload_for; // per type after the hello; empty:
                                                            // max_payload_bytes alone
    size_t payload_step_bytes{256 << 10}; // a payload's memory grows by at most this much
                                          // ahead of the bytes that arrived (>= 1)
};

class FrameReader
{
  public:
    /// The largest frame before the hello exchange is done: the largest hello-type message.
    static constexpr uint64_t kMaxHelloPayloadBytes = PeerAuth::kMaxHelloFrameBytes;
    /// Padding is read into a scratch piece of this size.
    static constexpr size_t kPaddingChunkBytes = 1 << 16;

    enum class Event
    {
        kNeedMore, // the bytes were taken; the frame is not whole yet
        kFrame,    // a whole frame: header() and TakePayload()
        kError,    // the stream is refused: error(); the connection ends
    };

    /// Where the next bytes go.
    struct Span
    {
        char* data;
        size_t size; // > 0 unless the reader failed
    };

    explicit FrameReader(FrameReaderOptions options);

    /// Frames after this call are checked against the limits of a connection past its hello.
    void set_hello_done(bool done) { m_helloDone = done; }
    bool hello_done() const { return m_helloDone; }

    /// The buffer the next bytes go into. REQUIRES: no error.
    Span Buffer();
    /// `n` bytes (1 <= n <= Buffer().size) were written at Buffer().data.
    Event Commit(size_t n);

    /// The frame of the last kFrame.
    const FrameHeader& header() const { return m_frame; }
    /// The payload of the last kFrame (moved out; call once).
    std::string TakePayload();

    /// Ok, or why the stream was refused.
    const hilo::Status& error() const { return m_error; }
    /// True while a frame has begun (a byte of its header arrived) and is not whole.
    bool mid_frame() const { return m_headerHave > 0; }
    /// Bytes of the current frame that arrived (header, payload and padding).
    uint64_t frame_bytes() const;
    /// Bytes of payload memory held now (the invariant above: <= arrived + one step).
    uint64_t payload_allocated_bytes() const { return m_allocated; }
    /// Payload bytes of the current frame that arrived.
    uint64_t payload_arrived_bytes() const { return m_payloadHave; }
    /// Frames delivered so far.
    uint64_t frames() const { return m_frames; }

  private:
    enum class Phase
    {
        kHeader,
        kPayload,
        kPadding,
    };
    Event OnHeader();
    Event Finish();
    Event Fail(hilo::Status why);

    FrameReaderOptions m_options;
    bool m_helloDone{false};
    Phase m_phase{Phase::kHeader};
    hilo::Status m_error;

    char m_header[FrameHeader::kBytes];
    size_t m_headerHave{0}; // header bytes of the current frame (kBytes once past the header)
    FrameHeader m_frame;
    std::vector<std::string> m_pieces; // the payload so far; each full but the last
    uint64_t m_payloadHave{0};
    uint64_t m_allocated{0};
    uint64_t m_paddingLeft{0};
    std::vector<char> m_scratch;
    std::string m_delivered;
    uint64_t m_frames{0};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_FRAME_READER_H

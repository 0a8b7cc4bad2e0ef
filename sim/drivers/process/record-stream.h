// RecordStream: a TcpTransport connection's bytes after its hello, through the record layer
// (record-cipher.h). Reads give the plaintext of the records that arrive, exactly as much as asked
// (as asio::async_read would from the socket); writes seal what they are given into records of at
// most RecordFormat::kMaxRecordBytes and write them (as asio::async_write would). The frame parser
// above runs unchanged over the plaintext.
//
// A record that fails (its tag, its length, or a stream that ends inside it) fails the read that
// needed it with boost::system::errc::bad_message, and error() says why; none of its bytes are
// given out, and every later read fails the same way. A stream that ends between records fails a
// read with asio::error::eof, as the socket would.
//
// Memory: one record's ciphertext and plaintext each way (about 2 x 64 KiB per direction), however
// large the messages. At most one read and one write are in flight at a time, as with a socket.
// Completions never run inside the call that started them.
#ifndef HILOSIM_DRIVERS_PROCESS_RECORD_STREAM_H
#define HILOSIM_DRIVERS_PROCESS_RECORD_STREAM_H

#include "sim/drivers/process/record-cipher.h"

#include "hilo/core/status.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <string>
#include <vector>

namespace hilosim
{

class RecordStream
{
  public:
    using Handler = std::function<void(const boost::system::error_code& ec, size_t bytes)>;

    /// Seals with `send_key` and opens with `receive_key` (RecordFormat::kKeyBytes each).
    /// `socket` must outlive this stream.
    RecordStream(boost::asio::ip::tcp::socket& socket, std::string_view send_key,
                 std::string_view receive_key);

    /// Fills `buffer` with the next plaintext bytes; `handler` gets the bytes given (all of them
    /// unless it has an error).
    void AsyncRead(boost::asio::mutable_buffer buffer, Handler handler);
    /// As AsyncRead, but ends as soon as some bytes were given (those of one record at least,
    /// as asio's async_read_some would from the socket).
    void AsyncReadSome(boost::asio::mutable_buffer buffer, Handler handler);
    /// Seals the bytes of `buffers`, in order, and writes them. The buffers must stay valid until
    /// `handler` runs.
    void AsyncWrite(std::vector<boost::asio::const_buffer> buffers, Handler handler);

    /// Ok, or why the stream failed (a record that did not open, or OpenSSL failing to seal).
    const hilo::Status& error() const { return m_error; }
    uint64_t records_sealed() const { return m_sealer.records(); }
    uint64_t records_opened() const { return m_opener.records(); }

  private:
    void ReadMore(Handler handler);
    void OnRecordHeader(const boost::system::error_code& ec, size_t n, Handler handler);
    void OnRecordBody(const boost::system::error_code& ec, Handler handler);
    /// Records why reads fail (the first reason) and ends the read in flight with bad_message.
    void FailRead(hilo::Status why, Handler handler);
    hilo::Status Truncated() const;
    void WriteMore(Handler handler);
    /// Runs `handler` from the loop, never inside the caller.
    void Post(Handler handler, boost::system::error_code ec, size_t bytes);

    boost::asio::ip::tcp::socket& m_socket;
    RecordSealer m_sealer;
    RecordOpener m_opener;
    hilo::Status m_error;

    // The read in flight (its handler travels with the operation: see the .cc).
    boost::asio::mutable_buffer m_readBuffer;
    size_t m_readDone{0};
    bool m_readSome{false}; // the read in flight ends with the first bytes
    // The record being read and what is left of the last one opened.
    std::string m_recordHeader;
    std::string m_recordBody;
    std::string m_plain;
    size_t m_plainAt{0};

    // The write in flight.
    std::vector<boost::asio::const_buffer> m_writeBuffers;
    size_t m_writeIndex{0}; // buffer being sealed
    size_t m_writeAt{0};    // bytes of it already sealed
    size_t m_written{0};
    std::string m_writePlain;
    std::string m_writeRecord;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_RECORD_STREAM_H

#include "sim/drivers/process/record-stream.h"

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <cstring>

namespace hilosim
{

namespace asio = boost::asio;

namespace
{

boost::system::error_code
BadMessage()
{
    return boost::system::errc::make_error_code(boost::system::errc::bad_message);
}

} // namespace

RecordStream::RecordStream(asio::ip::tcp::socket& socket, std::string_view send_key,
                           std::string_view receive_key)
  : m_socket(socket)
  , m_sealer(send_key)
  , m_opener(receive_key)
  , m_error(m_opener.error())
{
}

// The handlers travel with the operation (never stored here): a connection's handlers hold the
// connection, which holds this stream, and an io_context destroyed with operations pending then
// frees them all.

void
RecordStream::AsyncRead(asio::mutable_buffer buffer, Handler handler)
{
    m_readBuffer = buffer;
    m_readDone = 0;
    m_readSome = false;
    ReadMore(std::move(handler));
}

void
RecordStream::AsyncReadSome(asio::mutable_buffer buffer, Handler handler)
{
    m_readBuffer = buffer;
    m_readDone = 0;
    m_readSome = true;
    ReadMore(std::move(handler));
}

void
RecordStream::Post(Handler handler, boost::system::error_code ec, size_t bytes)
{
    asio::post(m_socket.get_executor(),
               [this, handler = std::move(handler), ec, bytes]()
               {
                   // Closed in between: as the socket's own operations end.
                   handler(!ec && !m_socket.is_open() ? asio::error::operation_aborted : ec, bytes);
               });
}

void
RecordStream::ReadMore(Handler handler)
{
    if (!m_error.ok())
    {
        Post(std::move(handler), BadMessage(), m_readDone);
        return;
    }
    const size_t take = std::min(m_readBuffer.size() - m_readDone, m_plain.size() - m_plainAt);
    if (take > 0)
    {
        std::memcpy(static_cast<char*>(m_readBuffer.data()) + m_readDone,
                    m_plain.data() + m_plainAt, take);
        m_plainAt += take;
        m_readDone += take;
    }
    if (m_readDone == m_readBuffer.size() || (m_readSome && m_readDone > 0))
    {
        Post(std::move(handler), {}, m_readDone);
        return;
    }
    m_recordHeader.resize(RecordFormat::kHeaderBytes);
    asio::async_read(
        m_socket, asio::buffer(m_recordHeader),
        [this, handler = std::move(handler)](const boost::system::error_code& ec, size_t n) mutable
        { OnRecordHeader(ec, n, std::move(handler)); });
}

void
RecordStream::OnRecordHeader(const boost::system::error_code& ec, size_t n, Handler handler)
{
    if (!ec && !m_socket.is_open())
    {
        handler(asio::error::operation_aborted, m_readDone); // closed as the read completed
        return;
    }
    if (ec)
    {
        if (ec == asio::error::eof && n > 0)
        {
            FailRead(Truncated(), std::move(handler));
            return;
        }
        handler(ec, m_readDone); // eof between records: the connection ended
        return;
    }
    auto body = m_opener.BodyBytes(m_recordHeader);
    if (!body.ok())
    {
        FailRead(body.status(), std::move(handler));
        return;
    }
    m_recordBody.resize(*body);
    asio::async_read(
        m_socket, asio::buffer(m_recordBody),
        [this, handler = std::move(handler)](const boost::system::error_code& ec, size_t) mutable
        { OnRecordBody(ec, std::move(handler)); });
}

void
RecordStream::OnRecordBody(const boost::system::error_code& ec, Handler handler)
{
    if (!ec && !m_socket.is_open())
    {
        handler(asio::error::operation_aborted, m_readDone);
        return;
    }
    if (ec)
    {
        if (ec == asio::error::eof)
        {
            FailRead(Truncated(), std::move(handler));
            return;
        }
        handler(ec, m_readDone);
        return;
    }
    m_plainAt = 0;
    const hilo::Status opened = m_opener.Open(m_recordHeader, m_recordBody, &m_plain);
    if (!opened.ok())
    {
        FailRead(opened, std::move(handler));
        return;
    }
    ReadMore(std::move(handler));
}

hilo::Status
RecordStream::Truncated() const
{
    return hilo::Status::Corruption("the stream ended inside record " +
                                    std::to_string(m_opener.records()) + " (truncated)");
}

void
RecordStream::FailRead(hilo::Status why, Handler handler)
{
    if (m_error.ok())
    {
        m_error = std::move(why);
    }
    m_plain.clear();
    m_plainAt = 0;
    handler(BadMessage(), m_readDone);
}

void
RecordStream::AsyncWrite(std::vector<asio::const_buffer> buffers, Handler handler)
{
    m_writeBuffers = std::move(buffers);
    m_writeIndex = 0;
    m_writeAt = 0;
    m_written = 0;
    WriteMore(std::move(handler));
}

void
RecordStream::WriteMore(Handler handler)
{
    m_writePlain.clear();
    while (m_writeIndex < m_writeBuffers.size() &&
           m_writePlain.size() < RecordFormat::kMaxRecordBytes)
    {
        const asio::const_buffer& b = m_writeBuffers[m_writeIndex];
        const size_t take =
            std::min(b.size() - m_writeAt, RecordFormat::kMaxRecordBytes - m_writePlain.size());
        m_writePlain.append(static_cast<const char*>(b.data()) + m_writeAt, take);
        m_writeAt += take;
        if (m_writeAt == b.size())
        {
            ++m_writeIndex;
            m_writeAt = 0;
        }
    }
    if (m_writePlain.empty())
    {
        Post(std::move(handler), {}, m_written);
        return;
    }
    m_writeRecord.clear();
    const hilo::Status sealed = m_sealer.Seal(m_writePlain, &m_writeRecord);
    if (!sealed.ok())
    {
        if (m_error.ok())
        {
            m_error = sealed;
        }
        Post(std::move(handler), BadMessage(), m_written);
        return;
    }
    const size_t plain_bytes = m_writePlain.size();
    asio::async_write(m_socket, asio::buffer(m_writeRecord),
                      [this, plain_bytes, handler = std::move(handler)](
                          const boost::system::error_code& ec, size_t) mutable
                      {
                          if (ec || !m_socket.is_open())
                          {
                              // Closed as the write completed: the buffers may have gone with
                              // the connection's queue.
                              handler(ec ? ec : asio::error::operation_aborted, m_written);
                              return;
                          }
                          m_written += plain_bytes;
                          WriteMore(std::move(handler));
                      });
}

} // namespace hilosim

#include "sim/drivers/process/process-port.h"

#include <algorithm>

namespace hilosim
{

ProcessPort::ProcessPort(boost::asio::io_context& io, TcpTransport* transport,
                         std::chrono::steady_clock::time_point epoch, std::function<void()> on_stop)
  : m_io(io)
  , m_transport(transport)
  , m_epoch(epoch)
  , m_onStop(std::move(on_stop))
{
}

ProcessPort::~ProcessPort()
{
    CancelTimers();
}

double
ProcessPort::Now() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_epoch).count();
}

int64_t
ProcessPort::NowNs() const
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                m_epoch)
        .count();
}

void
ProcessPort::After(double modelled_s, ComputePhase, double spent_s, std::function<void()> fn)
{
    const double wait_s = std::max(0.0, modelled_s - spent_s);
    auto timer = std::make_shared<boost::asio::steady_timer>(m_io);
    timer->expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(wait_s)));
    m_timers.insert(timer);
    timer->async_wait(
        [this, timer, fn = std::move(fn)](const boost::system::error_code& ec)
        {
            if (ec)
            {
                return; // cancelled: the port is going away
            }
            m_timers.erase(timer);
            fn();
        });
}

hilo::Status
ProcessPort::Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                  uint64_t wire_bytes)
{
    return m_transport->Send(peer, type, std::move(payload), wire_bytes);
}

void
ProcessPort::Reconnect(uint32_t peer)
{
    m_transport->Redial(peer);
}

void
ProcessPort::Stop()
{
    if (m_onStop)
    {
        m_onStop();
    }
}

void
ProcessPort::CancelTimers()
{
    for (const auto& t : m_timers)
    {
        t->cancel();
    }
    m_timers.clear();
}

std::chrono::steady_clock::time_point
SteadyFromNs(int64_t ns)
{
    return std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::nanoseconds(ns)));
}

int64_t
SteadyNowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace hilosim

#include "sim/drivers/process/node-loop.h"

#include "sim/drivers/process/process-port.h"

#include <csignal>
#include <iostream>

namespace hilosim
{

namespace asio = boost::asio;

NodeLoop::NodeLoop(std::string label, std::ostream& err, int64_t epoch_ns, double stall_timeout_s)
  : m_label(std::move(label))
  , m_err(err)
  , m_epoch(epoch_ns > 0 ? SteadyFromNs(epoch_ns) : std::chrono::steady_clock::now())
  , m_stallTimeout(stall_timeout_s)
  , m_signals(m_io, SIGINT, SIGTERM)
  , m_watchdog(m_io)
{
}

void
NodeLoop::SetEpochNs(int64_t ns)
{
    m_epoch = SteadyFromNs(ns);
}

int64_t
NodeLoop::NowNs() const
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                m_epoch)
        .count();
}

void
NodeLoop::Finish(int code, const std::string& message)
{
    if (m_code >= 0)
    {
        return;
    }
    m_code = code;
    if (!message.empty())
    {
        Log(message);
    }
    m_io.stop();
}

bool
NodeLoop::Ready(bool sync, uint16_t port)
{
    if (!sync)
    {
        return true;
    }
    std::cout << "ready " << port << std::endl;
    std::string line;
    if (!std::getline(std::cin, line) || line.empty() ||
        line.find_first_not_of("0123456789") != std::string::npos)
    {
        Log("no epoch on stdin (got \"" + line + "\")");
        return false;
    }
    SetEpochNs(std::stoll(line));
    return true;
}

void
NodeLoop::AtEpoch(std::function<void()> start, bool late_is_expected)
{
    const auto now = std::chrono::steady_clock::now();
    if (now >= m_epoch)
    {
        const double late = std::chrono::duration<double>(now - m_epoch).count();
        if (late > 0.05 && !late_is_expected)
        {
            Log("started " + std::to_string(late) +
                " s after the run's epoch (start-up took longer than hilo-emu allowed)");
        }
        m_io.post(std::move(start));
        return;
    }
    m_startTimer = std::make_unique<asio::steady_timer>(m_io, m_epoch);
    m_startTimer->async_wait(
        [start = std::move(start)](const boost::system::error_code& ec)
        {
            if (!ec)
                start();
        });
}

int
NodeLoop::Run(std::function<std::string()> waiting_for)
{
    m_waitingFor = std::move(waiting_for);
    m_signals.async_wait(
        [this](const boost::system::error_code& ec, int sig)
        {
            if (!ec)
                Finish(128 + sig, std::string("stopped by signal ") + std::to_string(sig));
        });
    Progress();
    Watch();
    if (m_code < 0)
    {
        m_io.run();
    }
    return m_code < 0 ? kExitRuntime : m_code;
}

void
NodeLoop::Watch()
{
    m_watchdog.expires_after(std::chrono::milliseconds(500));
    m_watchdog.async_wait(
        [this](const boost::system::error_code& ec)
        {
            if (ec)
                return;
            const double idle =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - m_lastProgress)
                    .count();
            if (idle > m_stallTimeout)
            {
                Finish(kExitRuntime,
                       "no progress for " + std::to_string(int(idle)) + " s (stall timeout " +
                           std::to_string(int(m_stallTimeout)) + " s): " + m_waitingFor());
                return;
            }
            Watch();
        });
}

} // namespace hilosim

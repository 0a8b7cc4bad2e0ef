// NodeLoop: what every hilo-node shares, whatever its role: the Boost.Asio event loop, the run's
// clock (a steady-clock epoch that hilo-emu hands every node), the exit decision (the first
// Finish wins), SIGINT/SIGTERM (exit 128 + N) and the stall watchdog: a node that sees no progress
// (Progress()) for `stall_timeout_s` ends with exit 1 and a line naming what it waited for.
#ifndef HILOSIM_DRIVERS_PROCESS_NODE_LOOP_H
#define HILOSIM_DRIVERS_PROCESS_NODE_LOOP_H

#include "sim/drivers/process/node-runner.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace hilosim
{

class NodeLoop
{
  public:
    /// `label` prefixes every line logged to `err`; `epoch_ns` <= 0: the run starts now.
    NodeLoop(std::string label, std::ostream& err, int64_t epoch_ns, double stall_timeout_s);

    boost::asio::io_context& io() { return m_io; }
    void SetEpochNs(int64_t ns);
    std::chrono::steady_clock::time_point epoch() const { return m_epoch; }
    /// Nanoseconds since the run's epoch.
    int64_t NowNs() const;
    void Log(const std::string& line) { m_err << m_label << ": " << line << std::endl; }
    /// A line that already names its node (the transport's).
    void LogRaw(const std::string& line) { m_err << line << std::endl; }

    /// Ends the loop with `code` (the first call wins); `message` goes to stderr.
    void Finish(int code, const std::string& message);
    bool finished() const { return m_code >= 0; }

    /// The node moved on: resets the stall watchdog.
    void Progress() { m_lastProgress = std::chrono::steady_clock::now(); }

    /// Set-up is done: with `sync` tells hilo-emu (a "ready PORT" line on stdout) and waits for
    /// the run's epoch on stdin. False when stdin ends or carries no number.
    bool Ready(bool sync, uint16_t port);

    /// Calls `start` at the run's epoch (at once when it has passed): every node of a run starts
    /// its role at modelled time 0, as in the simulator, whatever its own start-up took.
    void AtEpoch(std::function<void()> start, bool late_is_expected = false);

    /// Runs until Finish. `waiting_for` says what a stalled node waits for.
    int Run(std::function<std::string()> waiting_for);

  private:
    void Watch();

    std::string m_label;
    std::ostream& m_err;
    boost::asio::io_context m_io;
    std::chrono::steady_clock::time_point m_epoch;
    double m_stallTimeout;
    boost::asio::signal_set m_signals;
    boost::asio::steady_timer m_watchdog;
    std::chrono::steady_clock::time_point m_lastProgress;
    std::function<std::string()> m_waitingFor;
    std::unique_ptr<boost::asio::steady_timer> m_startTimer;
    int m_code{-1};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_NODE_LOOP_H

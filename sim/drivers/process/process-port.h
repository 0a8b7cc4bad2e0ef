// ProcessPort: the process driver's RolePort (sim/roles/role-port.h). Modelled time is real time:
// seconds on the steady clock since the run's epoch (shared by every process of a run on one
// machine, as hilo-emu passes it). A phase whose modelled GPU time exceeds the real time already
// spent on it waits out the difference on a timer, so the timeline matches the simulator's; a
// phase whose real computation took longer has overrun (the roles record it). Messages go through
// a TcpTransport. A failed role calls the stop handler the node installed.
#ifndef HILOSIM_DRIVERS_PROCESS_PROCESS_PORT_H
#define HILOSIM_DRIVERS_PROCESS_PROCESS_PORT_H

#include "sim/drivers/process/tcp-transport.h"
#include "sim/roles/role-port.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <set>

namespace hilosim
{

class ProcessPort : public RolePort
{
  public:
    /// `transport` must outlive the port.
    ProcessPort(boost::asio::io_context& io, TcpTransport* transport,
                std::chrono::steady_clock::time_point epoch, std::function<void()> on_stop);
    ~ProcessPort() override;

    double Now() const override;
    bool RealTime() const override { return true; }
    void After(double modelled_s, ComputePhase phase, double spent_s,
               std::function<void()> fn) override;
    hilo::Status Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wire_bytes) override;
    void Stop() override;
    /// Dials `peer` again through the transport (TcpTransport::Redial): the role's backoff is
    /// the only reconnect policy of a process (the node's transport does not redial by itself).
    void Reconnect(uint32_t peer) override;

    /// The run's epoch, once known (hilo-emu sends it after set-up).
    void SetEpoch(std::chrono::steady_clock::time_point epoch) { m_epoch = epoch; }
    /// Cancels every pending timer (their functions never run).
    void CancelTimers();
    /// Nanoseconds since the epoch (the sent_at of outgoing frames).
    int64_t NowNs() const;

  private:
    boost::asio::io_context& m_io;
    TcpTransport* m_transport;
    std::chrono::steady_clock::time_point m_epoch;
    std::function<void()> m_onStop;
    std::set<std::shared_ptr<boost::asio::steady_timer>> m_timers;
};

/// The steady clock's time point `ns` nanoseconds after its epoch (CLOCK_MONOTONIC on Linux, the
/// same for every process of the machine), and the inverse.
std::chrono::steady_clock::time_point SteadyFromNs(int64_t ns);
int64_t SteadyNowNs();

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_PROCESS_PORT_H

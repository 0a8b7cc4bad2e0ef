// WallTimer: real elapsed seconds on the steady clock. The roles use it for the real duration of a
// phase's computation, which a real-time driver compares with the phase's modelled GPU time
// (role-port.h); CPU-time measurements for reports use models::CpuTimer instead.
#ifndef HILOSIM_ROLES_WALL_TIMER_H
#define HILOSIM_ROLES_WALL_TIMER_H

#include <chrono>

namespace hilosim
{

class WallTimer
{
  public:
    WallTimer()
      : m_start(std::chrono::steady_clock::now())
    {
    }
    double Seconds() const
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    }

  private:
    std::chrono::steady_clock::time_point m_start;
};

} // namespace hilosim

#endif // HILOSIM_ROLES_WALL_TIMER_H

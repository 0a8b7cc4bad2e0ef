// CpuTimer: process CPU seconds (all threads), the unit of RolloutInfo/GradientInfo::cpu_s. CPU
// time, not wall time, so that measurements hold on a machine shared with other jobs.
#ifndef MODELS_CPU_TIMER_H
#define MODELS_CPU_TIMER_H

#include <ctime>

namespace models
{

class CpuTimer
{
  public:
    CpuTimer()
      : m_start(Now())
    {
    }
    double Seconds() const { return Now() - m_start; }

    static double Now()
    {
        timespec ts{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    }

  private:
    double m_start;
};

} // namespace models

#endif // MODELS_CPU_TIMER_H

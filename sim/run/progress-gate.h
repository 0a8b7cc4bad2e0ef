// ProgressGate: when a run's progress line is shown. On a terminal every step redraws one line
// (carriage return); into a file or pipe a plain line is printed the first time an arm passes each
// `percent` of its steps, and at its last step, so that logs hold a few whole lines, no '\r'.
#ifndef HILO_SIM_RUN_PROGRESS_GATE_H
#define HILO_SIM_RUN_PROGRESS_GATE_H

#include <cstddef>
#include <cstdint>
#include <map>

namespace hilosim
{

class ProgressGate
{
  public:
    // terminal: whether stderr is a terminal (StderrIsTerminal()); percent in 1..100.
    explicit ProgressGate(bool terminal, int percent = 10);

    // Whether stderr (fd 2) is a terminal.
    static bool StderrIsTerminal();

    // Whether step `done` of `total` of arm `arm` is to be shown (see above). Steps of one arm
    // come in increasing order.
    bool ShouldShow(size_t arm, uint64_t done, uint64_t total);

    // "\r" before a line on a terminal (it redraws the last), "" otherwise.
    const char* LineStart() const { return m_terminal ? "\r" : ""; }

    // After a line: "\n" when it is the arm's last step or not on a terminal, else spaces that
    // blank what a longer line before left.
    const char* LineEnd(uint64_t done, uint64_t total) const
    {
        return !m_terminal || done >= total ? "\n" : "   ";
    }

    bool terminal() const { return m_terminal; }

  private:
    bool m_terminal;
    int m_percent;
    std::map<size_t, int> m_shownBucket; // per arm: the last percent bucket shown
};

} // namespace hilosim

#endif // HILO_SIM_RUN_PROGRESS_GATE_H

// The key of one hilo-emu run: a fresh random key (peer-auth.h) in a private 0700 folder
// <base>/hilo-emu-key-XXXXXX, with a lock file the run holds with flock(2) for as long as it lives.
// The folder is removed when the run ends normally; a run killed outright (SIGKILL, a crash)
// cannot remove it, so every new run first sweeps the key folders whose lock nobody holds (the
// kernel releases a dead process's locks), and folders without a lock file older than a minute.
#ifndef HILOSIM_DRIVERS_PROCESS_RUN_KEY_H
#define HILOSIM_DRIVERS_PROCESS_RUN_KEY_H

#include "hilo/core/status.h"

#include <string>
#include <vector>

namespace hilosim
{

class RunKey
{
  public:
    /// `base`: the folder that holds the key folders (the system's temporary folder by default).
    explicit RunKey(std::string base = "");
    ~RunKey();
    RunKey(const RunKey&) = delete;
    RunKey& operator=(const RunKey&) = delete;

    /// Sweeps stale key folders, then creates this run's folder, lock and key.
    hilo::Status Create();
    const std::string& path() const { return m_path; }
    const std::string& folder() const { return m_dir; }
    /// The stale folders the last Create() removed.
    const std::vector<std::string>& swept() const { return m_swept; }

  private:
    void SweepStale();

    std::string m_base;
    std::string m_dir;
    std::string m_path;
    int m_lock_fd{-1};
    std::vector<std::string> m_swept;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_RUN_KEY_H

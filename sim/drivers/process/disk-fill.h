// DiskFill: a full disk for the learner's checkpoints, as hilo-emu --full-disk makes one in chaos
// runs. It fills the filesystem of the checkpoint folder with one file until the writes fail
// (ENOSPC), and frees it again: the learner's checkpoint writes in between fail as on a full disk.
// Only a small tmpfs may be filled (a real disk, or a large tmpfs, is refused), so a mistyped
// folder cannot fill the host's disk or memory.
#ifndef HILOSIM_DRIVERS_PROCESS_DISK_FILL_H
#define HILOSIM_DRIVERS_PROCESS_DISK_FILL_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>

namespace hilosim
{

/// The largest tmpfs DiskFill fills.
constexpr uint64_t kDiskFillMaxBytes = 256ull << 20;

class DiskFill
{
  public:
    /// InvalidArgument naming `dir` unless it is a folder on a tmpfs of at most kDiskFillMaxBytes.
    static hilo::Status Check(const std::string& dir);

    explicit DiskFill(std::string dir);
    ~DiskFill(); // frees the space
    DiskFill(const DiskFill&) = delete;
    DiskFill& operator=(const DiskFill&) = delete;

    /// Writes DIR/.hilo-disk-fill until the filesystem has no space left; returns the bytes it
    /// took. Internal error when it cannot (no ENOSPC, or the file cannot be made). No-op while
    /// full.
    hilo::StatusOr<uint64_t> Fill();
    /// Removes the file (no-op when not full).
    void Free();
    bool full() const { return m_full; }

  private:
    std::string m_path;
    bool m_full{false};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_DISK_FILL_H

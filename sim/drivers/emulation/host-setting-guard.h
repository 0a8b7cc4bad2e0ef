// HostSettingGuard: a host-wide setting an emulated run has to change, put back when the last run
// that relied on it ends. Linux lets a network namespace other than the root one choose as its
// default only the congestion controls listed in net.ipv4.tcp_allowed_congestion_control, a list
// the root namespace keeps for the whole host (hilo-emu adds the scenario's algorithm to it).
//
// The value from before the first change is kept in a record file beside the runs' lock files
// (<lock dir>/host-settings/<name>.orig); every change and every restore happens under a lock on
// that folder. A run restores the record when it ends and no other run is alive (its lock file
// held, host-resources.h); while one is, the last to end restores it. A run killed outright
// (SIGKILL) restores nothing, but the next run's Prepare does, when no run is alive then
// (RestoreIfNoRunAlive).
#ifndef HILOSIM_DRIVERS_EMULATION_HOST_SETTING_GUARD_H
#define HILOSIM_DRIVERS_EMULATION_HOST_SETTING_GUARD_H

#include "hilo/core/status.h"

#include <string>

namespace hilosim
{

class HostSettingGuard
{
  public:
    /// `setting_path`: the file that holds the setting (a /proc/sys path); `lock_dir`: where the
    /// runs' lock files are (kLockDir), `own_tag`: this run's tag (its lock file is not "another
    /// run"). `name` names the record file and messages.
    HostSettingGuard(std::string name, std::string setting_path, std::string lock_dir,
                     std::string own_tag);
    /// The setting behind net.ipv4.tcp_allowed_congestion_control, in kLockDir.
    static HostSettingGuard AllowedCongestionControl(const std::string& own_tag);

    /// Adds `word` to the setting's space-separated list when it is missing, keeping the value
    /// from before the first change. Returns the value it replaced, or "" when `word` was listed.
    hilo::StatusOr<std::string> AddWord(const std::string& word);

    /// Writes the kept value back and removes the record when no run other than this one is
    /// alive; returns the value written, or "" when nothing was (no record, or runs alive).
    hilo::StatusOr<std::string> RestoreIfNoRunAlive();

    const std::string& name() const { return m_name; }

  private:
    std::string RecordPath() const;
    bool OtherRunAlive() const;

    std::string m_name;
    std::string m_settingPath;
    std::string m_lockDir;
    std::string m_ownTag;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_HOST_SETTING_GUARD_H

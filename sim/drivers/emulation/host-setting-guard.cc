#include "sim/drivers/emulation/host-setting-guard.h"

#include "sim/drivers/emulation/resource-names.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hilosim
{
namespace
{

// An exclusive flock on a file, held for this object's life.
class FolderLock
{
  public:
    static hilo::StatusOr<FolderLock> Take(const std::string& path)
    {
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return hilo::Status::Internal("cannot open " + path + ": " + std::strerror(errno));
        while (flock(fd, LOCK_EX) != 0)
        {
            if (errno != EINTR)
            {
                const std::string why = std::strerror(errno);
                close(fd);
                return hilo::Status::Internal("cannot lock " + path + ": " + why);
            }
        }
        return FolderLock(fd);
    }
    FolderLock(FolderLock&& other) noexcept
      : m_fd(other.m_fd)
    {
        other.m_fd = -1;
    }
    FolderLock(const FolderLock&) = delete;
    ~FolderLock()
    {
        if (m_fd >= 0)
            close(m_fd); // releases the flock
    }

  private:
    explicit FolderLock(int fd)
      : m_fd(fd)
    {
    }
    int m_fd;
};

hilo::StatusOr<std::string>
ReadLine(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        return hilo::Status::NotFound("cannot read " + path);
    std::string line;
    std::getline(in, line);
    return line;
}

hilo::Status
WriteLine(const std::string& path, const std::string& line)
{
    std::ofstream out(path, std::ios::trunc);
    out << line << "\n";
    out.flush();
    if (!out)
        return hilo::Status::Internal("cannot write \"" + line + "\" to " + path);
    return hilo::Status::Ok();
}

} // namespace

HostSettingGuard::HostSettingGuard(std::string name, std::string setting_path, std::string lock_dir,
                                   std::string own_tag)
  : m_name(std::move(name))
  , m_settingPath(std::move(setting_path))
  , m_lockDir(std::move(lock_dir))
  , m_ownTag(std::move(own_tag))
{
}

HostSettingGuard
HostSettingGuard::AllowedCongestionControl(const std::string& own_tag)
{
    return HostSettingGuard("net.ipv4.tcp_allowed_congestion_control",
                            "/proc/sys/net/ipv4/tcp_allowed_congestion_control", kLockDir, own_tag);
}

std::string
HostSettingGuard::RecordPath() const
{
    // A folder of its own: the lock-file sweep of dead runs (host-resources.h) leaves it alone.
    return m_lockDir + "/host-settings/" + m_name + ".orig";
}

bool
HostSettingGuard::OtherRunAlive() const
{
    const std::string own = std::string(kResourcePrefix) + m_ownTag + ".lock";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(m_lockDir, ec))
    {
        const std::string file = entry.path().filename().string();
        if (file == own || file.rfind(kResourcePrefix, 0) != 0 ||
            entry.path().extension() != ".lock")
            continue;
        const int fd = open(entry.path().c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0)
            continue; // removed meanwhile
        const bool held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        close(fd);
        if (held)
            return true;
    }
    return false;
}

hilo::StatusOr<std::string>
HostSettingGuard::AddWord(const std::string& word)
{
    std::error_code ec;
    std::filesystem::create_directories(m_lockDir + "/host-settings", ec);
    if (ec)
        return hilo::Status::Internal("cannot create " + m_lockDir +
                                      "/host-settings: " + ec.message());
    auto lock = FolderLock::Take(m_lockDir + "/host-settings/.lock");
    if (!lock.ok())
        return lock.status();
    auto current = ReadLine(m_settingPath);
    if (!current.ok())
        return current.status();
    std::istringstream words(*current);
    for (std::string w; words >> w;)
    {
        if (w == word)
            return std::string();
    }
    if (!std::filesystem::exists(RecordPath()))
        HILO_RETURN_IF_ERROR(WriteLine(RecordPath(), *current)); // before the first change only
    HILO_RETURN_IF_ERROR(WriteLine(m_settingPath, *current + " " + word));
    return *current;
}

hilo::StatusOr<std::string>
HostSettingGuard::RestoreIfNoRunAlive()
{
    if (!std::filesystem::exists(RecordPath()))
        return std::string();
    auto lock = FolderLock::Take(m_lockDir + "/host-settings/.lock");
    if (!lock.ok())
        return lock.status();
    auto kept = ReadLine(RecordPath());
    if (!kept.ok() || OtherRunAlive())
        return std::string(); // gone meanwhile (another run restored it), or still needed
    HILO_RETURN_IF_ERROR(WriteLine(m_settingPath, *kept));
    std::error_code ec;
    std::filesystem::remove(RecordPath(), ec);
    return *kept;
}

} // namespace hilosim

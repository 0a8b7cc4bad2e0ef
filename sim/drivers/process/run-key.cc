#include "sim/drivers/process/run-key.h"

#include "sim/drivers/process/file-lock.h"
#include "sim/drivers/process/peer-auth.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace hilosim
{
namespace
{

constexpr char kFolderPrefix[] = "hilo-emu-key-";
constexpr char kLockName[] = "run.lock";
// A folder without a lock file is either a run between mkdtemp and taking its lock (microseconds)
// or one left by a build that had no lock file: old enough, it is stale.
constexpr auto kUnlockedGrace = std::chrono::minutes(1);

} // namespace

RunKey::RunKey(std::string base)
  : m_base(std::move(base))
{
    if (m_base.empty())
        m_base = std::filesystem::temp_directory_path().string();
}

RunKey::~RunKey()
{
    if (!m_dir.empty())
    {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
    if (m_lock_fd >= 0)
        close(m_lock_fd);
}

void
RunKey::SweepStale()
{
    m_swept.clear();
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(m_base, ec))
    {
        const std::string name = entry.path().filename().string();
        if (name.rfind(kFolderPrefix, 0) != 0)
            continue;
        // Only plain folders of this user: never follow a link someone else planted.
        struct stat st;
        if (lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        const std::string lock = (entry.path() / kLockName).string();
        int fd = -1;
        bool stale = false;
        if (TryLockFile(lock, &fd))
        {
            stale = true; // its run is gone; we hold its lock while removing it
        }
        else if (access(lock.c_str(), F_OK) != 0)
        {
            const auto age = std::filesystem::file_time_type::clock::now() -
                             std::filesystem::last_write_time(entry.path(), ec);
            stale = !ec && age > kUnlockedGrace;
        }
        if (stale)
        {
            std::error_code rm;
            std::filesystem::remove_all(entry.path(), rm);
            if (!rm)
                m_swept.push_back(entry.path().string());
        }
        if (fd >= 0)
            close(fd);
    }
}

hilo::Status
RunKey::Create()
{
    SweepStale();
    std::string pattern =
        (std::filesystem::path(m_base) / (std::string(kFolderPrefix) + "XXXXXX")).string();
    if (mkdtemp(&pattern[0]) == nullptr)
    {
        return hilo::Status::Internal("cannot create a folder for the run's key in " + m_base +
                                      ": " + std::string(std::strerror(errno)));
    }
    m_dir = pattern; // mkdtemp makes it 0700
    const std::string lock = m_dir + "/" + kLockName;
    m_lock_fd = open(lock.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (m_lock_fd < 0 || flock(m_lock_fd, LOCK_EX | LOCK_NB) != 0)
    {
        return hilo::Status::Internal("cannot lock " + lock + ": " +
                                      std::string(std::strerror(errno)));
    }
    m_path = m_dir + "/run.key";
    return PeerAuth::WriteNewKeyFile(m_path);
}

} // namespace hilosim

#include "sim/drivers/process/disk-fill.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace hilosim
{

hilo::Status
DiskFill::Check(const std::string& dir)
{
    struct stat st
    {
    };
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return hilo::Status::InvalidArgument(dir + " is not a folder");
    struct statfs fs
    {
    };
    if (::statfs(dir.c_str(), &fs) != 0)
        return hilo::Status::InvalidArgument("cannot read the filesystem of " + dir + ": " +
                                             std::strerror(errno));
    const uint64_t size = static_cast<uint64_t>(fs.f_blocks) * static_cast<uint64_t>(fs.f_bsize);
    if (fs.f_type != TMPFS_MAGIC || size > kDiskFillMaxBytes)
        return hilo::Status::InvalidArgument(
            dir + " must be on a tmpfs of at most " + std::to_string(kDiskFillMaxBytes >> 20) +
            " MiB to be filled (it is " + (fs.f_type == TMPFS_MAGIC ? "a tmpfs" : "not a tmpfs") +
            " of " + std::to_string(size >> 20) +
            " MiB); e.g. mount -t tmpfs -o size=16m hilo-ckpt " + dir);
    return hilo::Status::Ok();
}

DiskFill::DiskFill(std::string dir)
  : m_path(std::move(dir) + "/.hilo-disk-fill")
{
}

DiskFill::~DiskFill()
{
    Free();
}

hilo::StatusOr<uint64_t>
DiskFill::Fill()
{
    if (m_full)
        return uint64_t{0};
    const int fd =
        ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return hilo::Status::Internal("cannot make " + m_path + ": " + std::strerror(errno));
    m_full = true; // the file is ours to remove from here on
    const std::vector<char> chunk(64 << 10, '\xA5');
    uint64_t bytes = 0;
    // Bounded: a tmpfs of at most kDiskFillMaxBytes (Check), so at most that many bytes.
    for (uint64_t limit = kDiskFillMaxBytes + chunk.size(); bytes < limit;)
    {
        const ssize_t n = ::write(fd, chunk.data(), chunk.size());
        if (n > 0)
        {
            bytes += static_cast<uint64_t>(n);
            continue;
        }
        const int err = n < 0 ? errno : ENOSPC;
        if (err == EINTR)
            continue;
        ::close(fd);
        if (err != ENOSPC)
            return hilo::Status::Internal("writing " + m_path + ": " + std::strerror(err));
        return bytes;
    }
    ::close(fd);
    return hilo::Status::Internal(m_path + " took " + std::to_string(bytes) +
                                  " bytes without filling its filesystem");
}

void
DiskFill::Free()
{
    if (m_full)
        ::unlink(m_path.c_str());
    m_full = false;
}

} // namespace hilosim

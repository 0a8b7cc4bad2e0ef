#include "sim/roles/durable-file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace hilosim
{
namespace
{

hilo::Status
Errno(const std::string& what)
{
    return hilo::Status::Internal(what + ": " + std::strerror(errno));
}

// Closes a descriptor on every path out.
class Fd
{
  public:
    explicit Fd(int fd)
      : m_fd(fd)
    {
    }
    ~Fd()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }
    /// Closes now; false (errno set) when close reports an error (a deferred write error).
    bool Close()
    {
        const int fd = m_fd;
        m_fd = -1;
        return ::close(fd) == 0;
    }

  private:
    int m_fd;
};

hilo::Status
WriteAll(int fd, std::string_view bytes, const std::string& path)
{
    size_t done = 0;
    while (done < bytes.size())
    {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return Errno("cannot write " + path);
        done += static_cast<size_t>(n);
    }
    return hilo::Status::Ok();
}

hilo::Status
SyncDirectory(const std::string& path)
{
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty())
        dir = ".";
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0)
        return Errno("cannot open the directory " + dir);
    if (::fsync(fd.get()) != 0)
        return Errno("cannot fsync the directory " + dir);
    return hilo::Status::Ok();
}

} // namespace

hilo::Status
WriteDurably(const std::string& path, std::string_view bytes)
{
    const std::string tmp = path + ".tmp";
    if (::unlink(tmp.c_str()) != 0 && errno != ENOENT)
        return Errno("cannot remove the stale " + tmp);
    {
        Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (fd.get() < 0)
            return Errno("cannot create " + tmp);
        hilo::Status written = WriteAll(fd.get(), bytes, tmp);
        if (written.ok() && ::fsync(fd.get()) != 0)
            written = Errno("cannot fsync " + tmp);
        if (written.ok() && !fd.Close())
            written = Errno("cannot close " + tmp);
        if (!written.ok())
        {
            ::unlink(tmp.c_str());
            return written;
        }
    }
    const std::string prev = path + ".prev";
    const std::string prev_tmp = prev + ".tmp";
    if (::unlink(prev_tmp.c_str()) != 0 && errno != ENOENT)
        return Errno("cannot remove the stale " + prev_tmp);
    if (::link(path.c_str(), prev_tmp.c_str()) == 0)
    {
        if (::rename(prev_tmp.c_str(), prev.c_str()) != 0)
            return Errno("cannot rename " + prev_tmp + " to " + prev);
    }
    else if (errno != ENOENT)
    {
        return Errno("cannot link " + path + " to " + prev_tmp);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        return Errno("cannot rename " + tmp + " to " + path);
    return SyncDirectory(path);
}

std::vector<std::string>
ReadGenerations(const std::string& path)
{
    return {path, path + ".prev"};
}

hilo::StatusOr<std::string>
ReadWholeFile(const std::string& path)
{
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
    {
        if (errno == ENOENT)
            return hilo::Status::NotFound("no file " + path);
        return Errno("cannot open " + path);
    }
    std::string bytes;
    char buf[1 << 16];
    for (;;)
    {
        const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return Errno("cannot read " + path);
        if (n == 0)
            return bytes;
        bytes.append(buf, static_cast<size_t>(n));
    }
}

} // namespace hilosim

#include "sim/drivers/process/file-lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace hilosim
{

bool
TryLockFile(const std::string& path, int* fd)
{
    *fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (*fd < 0)
        return false;
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0)
    {
        close(*fd);
        *fd = -1;
        return false;
    }
    return true;
}

} // namespace hilosim

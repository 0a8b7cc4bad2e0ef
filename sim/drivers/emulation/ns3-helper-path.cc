// Where ns-3's tap-bridge library finds its tap creator.
//
// Debian's libns3-tap-bridge starts the (setuid) helper that creates a tap device with
//   execlp(TAP_CREATOR, ...)
// where TAP_CREATOR is a path fixed when the package was built
// (/build/ns3-<random>/ns3-3.37/ns-3.37/build/src/tap-bridge/ns3.37-tap-creator), which does not
// exist on any installed system; the helper is installed as /usr/libexec/ns3/ns3.37-tap-creator
// (the ns3::tap-creator CMake target, whose path the build passes in as HILO_NS3_TAP_CREATOR).
// This file defines execlp in the hilo-netem executable itself. The dynamic linker resolves the
// library's call to the executable's definition first (symbol interposition: the executable
// exports execlp because a linked library uses it), so a call for a missing ns-3 helper
// ("ns3.<version>-...creator") runs the installed one with the same name; every other call
// behaves as the C library's execlp. Nothing outside this process changes, and no file is
// written to the system. It runs in the child of TapBridge's fork(), so it only uses calls that
// are safe there (no allocation).
#include "sim/drivers/emulation/host-requirements.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>

extern "C" int
execlp(const char* file, const char* arg, ...)
{
    constexpr int kMaxArgs = 64;
    const char* argv[kMaxArgs + 1];
    int n = 0;
    argv[n++] = arg;
    va_list ap;
    va_start(ap, arg);
    while (argv[n - 1] != nullptr && n < kMaxArgs)
    {
        argv[n++] = va_arg(ap, const char*);
    }
    va_end(ap);
    argv[kMaxArgs] = nullptr;
    if (argv[n - 1] != nullptr)
    {
        errno = E2BIG;
        return -1;
    }
    const char* target = file;
    const char* slash = std::strrchr(file, '/');
    const char* installed = hilosim::InstalledTapCreator();
    const char* installed_name = std::strrchr(installed, '/');
    if (slash != nullptr && access(file, X_OK) != 0 && installed_name != nullptr &&
        std::strncmp(slash + 1, "ns3.", 4) == 0)
    {
        // Same directory as the installed tap creator, same file name as asked for (the other
        // helpers, e.g. ns3.37-raw-sock-creator, live next to it).
        static char path[4096];
        const size_t dir = static_cast<size_t>(installed_name - installed) + 1;
        const size_t name = std::strlen(slash + 1);
        if (dir + name < sizeof(path))
        {
            std::memcpy(path, installed, dir);
            std::memcpy(path + dir, slash + 1, name + 1);
            target = path;
        }
    }
    return execvp(target, const_cast<char* const*>(argv));
}

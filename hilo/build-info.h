// Which sources and build a binary comes from, for every executable's `--version`. The values are
// written by the build (hilo/build-info.cmake, run at every build and rewriting its generated
// source only when they change), so a commit made after configuring still shows.
#ifndef HILO_BUILD_INFO_H
#define HILO_BUILD_INFO_H

#include <string>

namespace hilo
{

// The commit the sources were at when built: a 12-digit short hash, with "+dirty" when tracked
// files differed from it; "unknown" outside a git checkout.
const char* BuildCommit();

// CMAKE_BUILD_TYPE of the build (Release, Debug, RelWithDebInfo, ...).
const char* BuildType();

// The `--version` line: "PROGRAM (hilo testbed) commit COMMIT, build TYPE".
inline std::string
VersionLine(const std::string& program)
{
    return program + " (hilo testbed) commit " + BuildCommit() + ", build " + BuildType();
}

} // namespace hilo

#endif // HILO_BUILD_INFO_H

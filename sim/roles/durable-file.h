// Durable files with two generations, for the learner's checkpoint.
//
// WriteDurably(path, bytes) leaves, at every instant of a crash or power loss, a complete file
// under `path` (the old content or the new) and one under `path.prev` (the generation before):
//   1. the bytes go to `path.tmp`, created with O_CREAT | O_EXCL | O_NOFOLLOW (whatever was at
//      that name, a stale temp file or a planted symlink, is unlinked first and never followed),
//      mode 0600, then fsync'd;
//   2. the current `path` is hard-linked to `path.prev.tmp` and renamed over `path.prev`;
//   3. `path.tmp` is renamed over `path`, and the directory is fsync'd.
// ReadGenerations(path) returns what a restore tries, newest first: `path`, then `path.prev`.
//
// FileSink is the seam through which the learner writes: the default one does the above; tests
// substitute one that fails (a full disk) without needing a small file system.
#ifndef HILOSIM_ROLES_DURABLE_FILE_H
#define HILOSIM_ROLES_DURABLE_FILE_H

#include "hilo/core/status.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hilosim
{

/// Writes `bytes` to `path` as described above. kInternal naming the step and errno's text.
hilo::Status WriteDurably(const std::string& path, std::string_view bytes);

/// `path`, then its previous generation `path + ".prev"`.
std::vector<std::string> ReadGenerations(const std::string& path);

/// Reads a whole file. kNotFound when it does not exist, kInternal when it cannot be read.
hilo::StatusOr<std::string> ReadWholeFile(const std::string& path);

/// How a role writes a file that must survive the disk (WriteDurably unless a test says not).
using FileSink = std::function<hilo::Status(const std::string& path, std::string_view bytes)>;

} // namespace hilosim

#endif // HILOSIM_ROLES_DURABLE_FILE_H

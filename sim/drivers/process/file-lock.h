// flock(2) without waiting, for the lock files that mark a run alive (hilo-emu's key folder, an
// emulated run's tag): the kernel releases a process's locks when it dies, however it dies.
#ifndef HILOSIM_DRIVERS_PROCESS_FILE_LOCK_H
#define HILOSIM_DRIVERS_PROCESS_FILE_LOCK_H

#include <string>

namespace hilosim
{

/// Opens `path` (never following a link) and locks it exclusively without waiting: true when this
/// process now holds it, through *fd (close it to release); false, with *fd = -1, when the file
/// cannot be opened or someone else holds the lock.
bool TryLockFile(const std::string& path, int* fd);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_FILE_LOCK_H

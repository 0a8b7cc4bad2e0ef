// RunForkedJobs: runs jobs side by side in child processes forked from the caller, each handing
// back its bytes (or its error) through a pipe. For work that needs a process of its own: a
// simulation's ns-3 Simulator is a process singleton, so two arms of one run can only run at the
// same time in two processes.
//
// A job runs in a fork() of the caller, so it sees everything the caller built before, and nothing
// it does reaches the caller but its result: state that does not survive fork (thread pools: those
// of LibTorch and OpenMP) must not exist in the caller yet; the job creates its own.
#ifndef HILOSIM_RUN_FORKED_JOBS_H
#define HILOSIM_RUN_FORKED_JOBS_H

#include "hilo/core/status.h"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace hilosim
{

struct ForkedJob
{
    std::string name; // names the job's process in errors ("arm 'hilo-spar'")
    // Runs in the child. Its bytes, or its error, come back to the caller unchanged; an exception
    // comes back as kInternal with its what().
    std::function<hilo::StatusOr<std::string>()> run;
};

/// Runs `jobs`, at most `parallel` at a time, each in a child process of its own, and returns
/// their bytes in job order. REQUIRES: parallel >= 1; the caller runs no other thread that
/// matters (fork copies only the calling thread).
///
/// The first job that fails ends the run: the children still running get SIGTERM and are waited
/// for, and its error comes back: the job's own Status unchanged, or, for a process that ended
/// without a result (killed, crashed, exited), kInternal "<name>: its process was killed by signal
/// N (...)". A child gets SIGTERM when the caller dies (PR_SET_PDEATHSIG), so killing the caller
/// leaves no child behind; SIGINT from a terminal reaches the whole process group anyway.
hilo::StatusOr<std::vector<std::string>> RunForkedJobs(const std::vector<ForkedJob>& jobs,
                                                       size_t parallel);

} // namespace hilosim

#endif // HILOSIM_RUN_FORKED_JOBS_H

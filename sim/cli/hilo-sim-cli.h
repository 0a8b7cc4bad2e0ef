// The `hilo-sim` command line, parsed with Boost.Program_options:
//   hilo-sim run SCENARIO [--set path=value ...] [--out DIR] [--quiet]
//   hilo-sim validate SCENARIO... [--set path=value ...] [--print]   (exit 2 if any is bad)
//   hilo-sim list gpus|models|compressors
//   hilo-sim [COMMAND] --help
// Kept apart from main() so tests can run it in-process.
#ifndef HILOSIM_CLI_HILO_SIM_CLI_H
#define HILOSIM_CLI_HILO_SIM_CLI_H

#include <ostream>

namespace hilosim
{

/// Exit codes of hilo-sim.
enum ExitCode
{
    kExitOk = 0,       // success
    kExitRuntime = 1,  // the run failed at run time
    kExitBadInput = 2, // bad command line or scenario; the message names file, line and field
};

/// Runs the command line `argv` (as main() receives it). Listings and reports go to `out`;
/// errors and progress to `err`. Returns the exit code.
int RunHiloSim(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_CLI_HILO_SIM_CLI_H

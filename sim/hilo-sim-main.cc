// hilo-sim: runs, validates and lists what scenarios may use; see sim/cli/hilo-sim-cli.h.
#include "models/tensor-memory.h"
#include "sim/cli/hilo-sim-cli.h"

#include <iostream>

int
main(int argc, char** argv)
{
    // Before anything allocates: the real workload's passes then reuse freed pages (outputs are
    // unchanged; see models/tensor-memory.h).
    const hilo::Status memory = models::KeepFreedMemoryForReuse();
    if (!memory.ok())
    {
        std::cerr << "hilo-sim: warning: " << memory.message()
                  << "; freed tensor memory goes back to the kernel\n";
    }
    return hilosim::RunHiloSim(argc, argv, std::cout, std::cerr);
}

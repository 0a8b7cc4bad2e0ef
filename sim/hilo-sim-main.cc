// hilo-sim: runs, validates and lists what scenarios may use; see sim/cli/hilo-sim-cli.h.
#include "sim/cli/hilo-sim-cli.h"

#include <iostream>

int
main(int argc, char** argv)
{
    return hilosim::RunHiloSim(argc, argv, std::cout, std::cerr);
}

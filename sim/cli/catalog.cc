#include "sim/cli/catalog.h"

namespace hilosim
{

ScenarioCatalog
CurrentCatalog()
{
    ScenarioCatalog c;
    for (const auto& [name, description] : KnownGpus())
        c.gpus.push_back(name);
    for (const auto& [name, description] : KnownLlms())
        c.llms.push_back(name);
    return c;
}

} // namespace hilosim

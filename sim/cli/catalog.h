// The names `hilo-sim list gpus|models` prints and scenarios may use: GPU profiles and modelled
// LLM profiles, each with a one-line description. Defined by the models layer once it is wired
// in; sim/cli/catalog-pending.cc holds provisional lists until then.
#ifndef HILOSIM_CLI_CATALOG_H
#define HILOSIM_CLI_CATALOG_H

#include "sim/scenario/scenario-validator.h"

#include <string>
#include <utility>
#include <vector>

namespace hilosim
{

/// GPU profiles: (name as scenarios write it, description), in a stable order.
std::vector<std::pair<std::string, std::string>> KnownGpus();
/// Modelled LLM profiles: (name as scenarios write it, description), in a stable order.
std::vector<std::pair<std::string, std::string>> KnownLlms();

/// Network models (network.model) and when to choose each.
std::vector<std::pair<std::string, std::string>> KnownNetworkModels();

/// Sync strategies (arms.strategy) and what workers hold under each.
std::vector<std::pair<std::string, std::string>> KnownStrategies();

/// Workloads: kinds (workload.kind), distillation teachers (workload.teacher.kind) and GRPO tasks
/// (workload.grpo.task), each as the scenario writes it, e.g. "distill teacher finetuned".
std::vector<std::pair<std::string, std::string>> KnownWorkloads();

/// The names above, as the scenario validator takes them.
ScenarioCatalog CurrentCatalog();

} // namespace hilosim

#endif // HILOSIM_CLI_CATALOG_H

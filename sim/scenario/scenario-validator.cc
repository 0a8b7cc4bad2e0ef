// ValidateScenario: the checks run part by part, in the order of the file; each part's checks
// live in scenario-validator-<part>.cc (sim/scenario/scenario-checker.h lists them).
#include "sim/scenario/scenario-validator.h"

#include "sim/scenario/scenario-checker.h"

namespace hilosim
{
namespace scenario_check
{

void
Checker::Run(const Scenario& s, ResolvedScenario* out)
{
    const Node root(s, m_source.tree(), "", 0, 0);
    m_warnings = &out->warnings;
    Identifier(root, "name", -1, s.name());
    out->name = s.name();
    out->description = s.description();
    out->seed = s.seed();

    CheckWorkload(root.Child("workload"), s.workload(), &out->workload);
    CheckOptimizer(root.Child("optimizer"), s.optimizer(), out->workload.steps, &out->optimizer);
    CheckLlmProfile(root, s, out);
    CheckLearner(root, s, out);
    CheckNetwork(root.Child("network"), s.network(), &out->network);
    CheckWorkers(root, s, out->network, &out->workers);
    WarnOfOneLargeGradientPass(root.Child("learner"), s, *out);
    CheckMode(root, s, out);
    CheckArms(root, s, out->workload, &out->arms);
    CheckFaults(root, s, *out, &out->faults);
    CheckNodeMemory(root, s, *out);
}

} // namespace scenario_check

void
ValidateScenario(const Scenario& scenario, const ScenarioCatalog& catalog, const SourceMap& source,
                 DiagnosticList* diagnostics, ResolvedScenario* resolved)
{
    scenario_check::Checker(source, catalog, diagnostics).Run(scenario, resolved);
}

} // namespace hilosim

// Semantic checks of a parsed scenario and its conversion into typed values (ResolvedScenario).
// Every problem becomes a Diagnostic naming the file, line and field path, what is wrong and what
// is allowed; all are collected, not just the first.
#ifndef HILOSIM_SCENARIO_SCENARIO_VALIDATOR_H
#define HILOSIM_SCENARIO_SCENARIO_VALIDATOR_H

#include "sim/scenario/diagnostic.h"
#include "sim/scenario/resolved-scenario.h"
#include "sim/scenario/scenario.pb.h"
#include "sim/scenario/source-map.h"

#include <string>
#include <vector>

namespace hilosim
{

/// The names a scenario may use that are defined outside the schema: GPU profiles and modelled
/// LLM profiles (models/). The CLI fills it from sim/cli/catalog.h; tests may pass their own.
/// Compressor kinds come from hilo::ListCompressors().
struct ScenarioCatalog
{
    std::vector<std::string> gpus; // `learner.gpu`, `workers[i].gpu`
    std::vector<std::string> llms; // `llm_profile`
};

/// Checks `scenario` (after overrides and FillDefaults) against the ranges documented in
/// scenario.proto, `catalog` and the compressor factory (each arm's compressor is built with its
/// options on a small adapter layout shaped like the workload's, so strict option errors show
/// here). Adds a Diagnostic per problem to `diagnostics`. When none was added, `resolved` holds
/// the typed scenario; otherwise its contents are unspecified.
void ValidateScenario(const Scenario& scenario, const ScenarioCatalog& catalog,
                      const SourceMap& source, DiagnosticList* diagnostics,
                      ResolvedScenario* resolved);

} // namespace hilosim

#endif // HILOSIM_SCENARIO_SCENARIO_VALIDATOR_H

// Loading a scenario: read the file, parse it (Protobuf text format), apply `--set` overrides,
// fill defaults, validate, and convert into typed values. Every failure is bad input: a
// kInvalidArgument Status whose message has one line per problem, each
// "FILE:LINE:COL: field.path: what is wrong; allowed: ..." (or "FILE: --set path=value: ..."
// when an override is to blame). `hilo-sim` maps it to exit code 2.
#ifndef HILOSIM_SCENARIO_SCENARIO_LOADER_H
#define HILOSIM_SCENARIO_SCENARIO_LOADER_H

#include "sim/scenario/diagnostic.h"
#include "sim/scenario/resolved-scenario.h"
#include "sim/scenario/scenario-validator.h"
#include "sim/scenario/scenario.pb.h"

#include "hilo/core/status.h"

#include <string>
#include <vector>

namespace hilosim
{

struct LoadedScenario
{
    std::string path;                   // the scenario file as the user named it
    std::vector<std::string> overrides; // the `--set` assignments, in the order applied
    Scenario scenario;                  // after overrides, with every default filled in
    ResolvedScenario resolved;          // the same in typed values
    std::string resolved_text;          // PrintScenario(scenario): resolved.textproto
};

/// Loads the scenario file `path` with `overrides` ("path.to.field=value", applied in order) and
/// checks names against `catalog`. When `diagnostics` is given it receives every problem found.
hilo::StatusOr<LoadedScenario> LoadScenarioFile(const std::string& path,
                                                const std::vector<std::string>& overrides,
                                                const ScenarioCatalog& catalog,
                                                std::vector<Diagnostic>* diagnostics = nullptr);

/// As LoadScenarioFile, from `text`; `path` only names the source in messages.
hilo::StatusOr<LoadedScenario> LoadScenarioText(const std::string& text, const std::string& path,
                                                const std::vector<std::string>& overrides,
                                                const ScenarioCatalog& catalog,
                                                std::vector<Diagnostic>* diagnostics = nullptr);

/// The scenario in text format, deterministic (fields in schema order, map entries sorted by
/// key): equal messages give equal bytes.
std::string PrintScenario(const Scenario& scenario);

} // namespace hilosim

#endif // HILOSIM_SCENARIO_SCENARIO_LOADER_H

// Parsing of scenario text (Protobuf text format) into hilosim::Scenario, with syntax errors,
// unknown fields and wrong types reported as Diagnostics at FILE:LINE:COLUMN and named by their
// field path (the parser stops at its first error, so there is at most one).
#ifndef HILOSIM_SCENARIO_SCENARIO_PARSER_H
#define HILOSIM_SCENARIO_SCENARIO_PARSER_H

#include "sim/scenario/diagnostic.h"
#include "sim/scenario/scenario.pb.h"

#include <google/protobuf/text_format.h>

#include <string>

namespace hilosim
{

/// Parses `text` into `scenario`, recording field locations in `tree` (may be null). `file` only
/// names the source in diagnostics. Returns false, with diagnostics added, on any error.
bool ParseScenarioText(const std::string& text, const std::string& file, Scenario* scenario,
                       google::protobuf::TextFormat::ParseInfoTree* tree,
                       DiagnosticList* diagnostics);

} // namespace hilosim

#endif // HILOSIM_SCENARIO_SCENARIO_PARSER_H

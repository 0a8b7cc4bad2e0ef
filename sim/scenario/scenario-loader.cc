#include "sim/scenario/scenario-loader.h"

#include "sim/scenario/scenario-defaults.h"
#include "sim/scenario/scenario-override.h"
#include "sim/scenario/scenario-parser.h"
#include "sim/scenario/source-map.h"

#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hilosim
{
namespace
{

hilo::Status
Finish(const DiagnosticList& list, std::vector<Diagnostic>* diagnostics)
{
    if (diagnostics != nullptr)
        *diagnostics = list.items();
    return list.ToStatus();
}

} // namespace

hilo::StatusOr<LoadedScenario>
LoadScenarioFile(const std::string& path, const std::vector<std::string>& overrides,
                 const ScenarioCatalog& catalog, std::vector<Diagnostic>* diagnostics)
{
    std::error_code ec;
    const bool regular = std::filesystem::is_regular_file(path, ec);
    std::ifstream in;
    if (regular)
        in.open(path, std::ios::binary);
    if (!regular || !in)
    {
        DiagnosticList list;
        list.Add({path, 0, 0, "", "",
                  std::string("cannot read the scenario file: ") +
                      (regular || ec ? std::strerror(errno) : "no such regular file")});
        return Finish(list, diagnostics);
    }
    std::ostringstream text;
    text << in.rdbuf();
    return LoadScenarioText(text.str(), path, overrides, catalog, diagnostics);
}

hilo::StatusOr<LoadedScenario>
LoadScenarioText(const std::string& text, const std::string& path,
                 const std::vector<std::string>& overrides, const ScenarioCatalog& catalog,
                 std::vector<Diagnostic>* diagnostics)
{
    DiagnosticList list;
    LoadedScenario loaded;
    loaded.path = path;
    loaded.overrides = overrides;
    google::protobuf::TextFormat::ParseInfoTree tree;
    if (!ParseScenarioText(text, path, &loaded.scenario, &tree, &list))
    {
        return Finish(list, diagnostics);
    }
    SourceMap source(path, &tree);
    for (const std::string& assignment : overrides)
    {
        auto applied = ApplyOverride(&loaded.scenario, assignment);
        if (!applied.ok())
        {
            list.Add({path, 0, 0, "--set " + assignment, "", applied.status().message()});
            continue;
        }
        source.AddOverride(*applied, assignment);
    }
    if (!list.empty())
    {
        return Finish(list, diagnostics);
    }
    FillDefaults(&loaded.scenario);
    ValidateScenario(loaded.scenario, catalog, source, &list, &loaded.resolved);
    if (!list.empty())
    {
        return Finish(list, diagnostics);
    }
    loaded.resolved_text = PrintScenario(loaded.scenario);
    Finish(list, diagnostics);
    return loaded;
}

std::string
PrintScenario(const Scenario& scenario)
{
    google::protobuf::TextFormat::Printer printer;
    printer.SetUseUtf8StringEscaping(true);
    std::string out;
    printer.PrintToString(scenario, &out);
    return out;
}

} // namespace hilosim

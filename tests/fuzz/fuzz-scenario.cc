// libFuzzer target: the scenario loader (text-format parser, `--set` overrides, defaults,
// validator) on arbitrary text, against the catalog the CLI uses.
// Input: the scenario text up to the first NUL byte, then NUL-separated `--set` assignments
// (at most 8).
// Invariants: bad input is a kInvalidArgument Status with at least one diagnostic, never a crash
// or a hang; an accepted scenario's resolved text (what runs write as resolved.textproto) loads
// again, with no overrides, to the same resolved text.
#include "tests/fuzz/fuzz-fixture.h"

#include "sim/cli/catalog.h"
#include "sim/scenario/scenario-loader.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace hilosim;
    static const ScenarioCatalog catalog = CurrentCatalog();
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const size_t nul = input.find('\0');
    const std::string text(input.substr(0, nul));
    std::vector<std::string> overrides;
    if (nul != std::string_view::npos)
    {
        std::string_view rest = input.substr(nul + 1);
        while (overrides.size() < 8)
        {
            const size_t end = rest.find('\0');
            overrides.emplace_back(rest.substr(0, end));
            if (end == std::string_view::npos)
            {
                break;
            }
            rest.remove_prefix(end + 1);
        }
    }

    std::vector<Diagnostic> diagnostics;
    hilo::StatusOr<LoadedScenario> loaded =
        LoadScenarioText(text, "fuzz.textproto", overrides, catalog, &diagnostics);
    if (!loaded.ok())
    {
        if (loaded.status().code() != hilo::StatusCode::kInvalidArgument || diagnostics.empty())
        {
            hilo::fuzz::Fail("bad scenario reported as " + loaded.status().ToString() + " with " +
                             std::to_string(diagnostics.size()) + " diagnostics");
        }
        return 0;
    }
    if (!diagnostics.empty())
    {
        hilo::fuzz::Fail("accepted scenario came with diagnostics: " + diagnostics[0].ToString());
    }
    hilo::StatusOr<LoadedScenario> again =
        LoadScenarioText(loaded->resolved_text, "resolved.textproto", {}, catalog);
    if (!again.ok())
    {
        hilo::fuzz::Fail("the resolved text of an accepted scenario does not load:\n" +
                         again.status().message() + "\n--- resolved text:\n" +
                         loaded->resolved_text);
    }
    if (again->resolved_text != loaded->resolved_text)
    {
        hilo::fuzz::Fail("the resolved text of an accepted scenario resolves differently:\n" +
                         loaded->resolved_text + "\n--- became:\n" + again->resolved_text);
    }
    return 0;
}

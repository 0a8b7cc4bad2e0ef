// Helpers shared by the tests that start real node processes (hilo-emu --network direct and
// --network ns3): a sandbox folder per test, summary.json values, event-log line counts.
#ifndef HILOSIM_TESTS_PROCESS_TEST_UTIL_H
#define HILOSIM_TESTS_PROCESS_TEST_UTIL_H

#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hilosim::test
{

// A fresh folder `folder` (under the temporary directory) holding a copy of the scenario: the
// copy's path marks the test's processes. Readable by all, for processes in namespaces.
struct ProcessSandbox
{
    std::filesystem::path dir;
    std::string scenario;

    ProcessSandbox(const std::string& folder, const std::string& source)
    {
        namespace fs = std::filesystem;
        dir = fs::temp_directory_path() / folder;
        fs::remove_all(dir);
        fs::create_directories(dir);
        fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
        scenario = (dir / "scenario.textproto").string();
        fs::copy_file(source, scenario);
    }
    ~ProcessSandbox() { std::filesystem::remove_all(dir); }
    ProcessSandbox(const ProcessSandbox&) = delete;
    ProcessSandbox& operator=(const ProcessSandbox&) = delete;

    /// Processes whose command line names this sandbox (hilo-node, hilo-netem; the bracket keeps
    /// the shell that runs pgrep from matching its own command line).
    int LiveProcesses() const
    {
        const std::string name = dir.filename().string();
        const std::string pattern =
            dir.parent_path().string() + "/[" + name.substr(0, 1) + "]" + name.substr(1) + "/";
        auto r = RunCommand("pgrep -f -c -- '" + pattern + "' || true");
        return std::atoi(r.output.c_str());
    }

    /// Removes from the scenario copy the text from `from` to the end of the line, or, with
    /// `until`, to the end of the first `until` after it. False when `from` is not there.
    bool Erase(const std::string& from, const std::string& until = "\n")
    {
        std::string text = ReadFile(scenario);
        const size_t at = text.find(from);
        if (at == std::string::npos)
            return false;
        text.erase(at, text.find(until, at) + until.size() - at);
        std::ofstream f(scenario, std::ios::trunc);
        f << text;
        return static_cast<bool>(f);
    }
};

/// The start of the "full" arm of scenarios/teaching/05-faults.textproto, to the arm's "\n}\n":
/// tests that need one arm of it erase this one (both arms run the same faults).
inline const char* const kFullArmOf05 = "arms {\n  name: \"full\"";

/// The value of `"key": VALUE` in every arm of a summary.json, in order.
inline std::vector<std::string>
JsonValues(const std::string& json, const std::string& key)
{
    std::vector<std::string> values;
    const std::string needle = "\"" + key + "\": ";
    for (size_t p = json.find(needle); p != std::string::npos; p = json.find(needle, p + 1))
    {
        const size_t from = p + needle.size();
        values.push_back(json.substr(from, json.find_first_of(",\n}", from) - from));
    }
    return values;
}

/// How many lines of `path` start with `prefix`.
inline int
CountLines(const std::filesystem::path& path, const std::string& prefix)
{
    std::ifstream in(path);
    std::string line;
    int n = 0;
    while (std::getline(in, line))
        n += line.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
}

} // namespace hilosim::test

#endif // HILOSIM_TESTS_PROCESS_TEST_UTIL_H

// Helpers shared by the scenario and CLI tests.
#ifndef HILOSIM_TESTS_SCENARIO_TEST_UTIL_H
#define HILOSIM_TESTS_SCENARIO_TEST_UTIL_H

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

#include <gtest/gtest.h>

namespace hilosim::test
{

inline std::string
DataPath(const std::string& name)
{
    return std::string(HILO_SOURCE_DIR) + "/tests/sim/data/" + name;
}

inline std::string
ReadFile(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

struct CommandResult
{
    int exit_code{-1};
    std::string output; // stdout and stderr together
};

/// Runs `command` through the shell and returns its exit code and output.
inline CommandResult
RunCommand(const std::string& command)
{
    CommandResult r;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr)
        return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
        r.output.append(buf, n);
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

/// A two-step distillation on a one-layer model with its learner: the smallest workload a CLI
/// run can train, for tests that only vary workers, network and arms.
constexpr const char* kTinyWorkload = R"(
workload {
  kind: "distill"
  steps: 2
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  gen_tokens: 8
  eval_prompts: 8
}
learner { gpu: "H100-SXM" }
)";

inline std::string
HiloSim()
{
    return std::string(HILO_BINARY_DIR) + "/sim/hilo-sim";
}

/// A CSV as rows of cells (no quoting: the project's CSVs have none); a trailing comma is an
/// empty last cell.
inline std::vector<std::vector<std::string>>
ReadCsv(const std::string& path)
{
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    std::string line;
    while (std::getline(in, line))
    {
        std::vector<std::string> row;
        std::stringstream s(line);
        std::string cell;
        while (std::getline(s, cell, ','))
            row.push_back(cell);
        if (!line.empty() && line.back() == ',')
            row.push_back("");
        rows.push_back(row);
    }
    return rows;
}

/// Index of the column `name` in `csv`'s header row; a test failure (and 0) when there is none.
inline size_t
Column(const std::vector<std::vector<std::string>>& csv, const std::string& name)
{
    for (size_t i = 0; i < csv.at(0).size(); ++i)
    {
        if (csv[0][i] == name)
            return i;
    }
    ADD_FAILURE() << "no column " << name;
    return 0;
}

} // namespace hilosim::test

#endif // HILOSIM_TESTS_SCENARIO_TEST_UTIL_H

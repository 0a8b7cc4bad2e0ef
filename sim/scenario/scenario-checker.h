// The scenario validator's internals, shared by its files (one per part of the scenario:
// scenario-validator-{workload,nodes,network,mode,arms,faults}.cc, which follow the messages of
// scenario.proto). Only sim/scenario/scenario-validator*.cc include this; everyone else uses
// ValidateScenario (sim/scenario/scenario-validator.h).
#ifndef HILOSIM_SCENARIO_SCENARIO_CHECKER_H
#define HILOSIM_SCENARIO_SCENARIO_CHECKER_H

#include "sim/net/link-spec.h"
#include "sim/net/units.h"
#include "sim/scenario/diagnostic.h"
#include "sim/scenario/resolved-scenario.h"
#include "sim/scenario/scenario-validator.h"
#include "sim/scenario/scenario.pb.h"
#include "sim/scenario/source-map.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/text_format.h>

#include <cassert>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hilosim
{
namespace scenario_check
{

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;

/// "a, b, c".
std::string Join(const std::vector<std::string>& items);
bool Contains(const std::vector<std::string>& items, const std::string& s);
/// `v` as an ostream prints it ("0.5", "1e+06").
std::string Num(double v);
/// "." or "..": names become folder and file names (results/runs/<scenario>, pcap folders per
/// arm), where these two mean this folder and its parent.
bool IsDotName(const std::string& s);
/// 1-64 characters of [A-Za-z0-9._-], not "." or "..".
bool IsIdentifier(const std::string& s);
/// A complete link (every field valid, bandwidth set) in typed values
/// (scenario-validator-network.cc).
hilosim::LinkSpec ToLinkSpec(const Link& l);

// A message of the scenario being checked: its dotted path and where it sits in the file.
class Node
{
  public:
    Node(const Message& msg, const ParseInfoTree* tree, std::string path, int line, int column)
      : m_msg(msg)
      , m_tree(tree)
      , m_path(std::move(path))
      , m_line(line)
      , m_column(column)
    {
    }

    const std::string& path() const { return m_path; }
    int line() const { return m_line; }
    int column() const { return m_column; }

    /// The sub-message `field` (element `index` of a repeated field).
    Node Child(const std::string& field, int index = -1) const
    {
        const FieldDescriptor* fd = Field(field);
        const Reflection* r = m_msg.GetReflection();
        const Message& sub =
            index < 0 ? r->GetMessage(m_msg, fd) : r->GetRepeatedMessage(m_msg, fd, index);
        const ParseInfoTree* tree = m_tree ? m_tree->GetTreeForNested(fd, index) : nullptr;
        auto [line, column] = Location(field, index);
        return Node(sub, tree, PathOf(field, index), line, column);
    }

    /// Line and column of `field` in the file; this message's own when the field is not there.
    std::pair<int, int> Location(const std::string& field, int index = -1) const
    {
        if (m_tree != nullptr)
        {
            const FieldDescriptor* fd = Field(field);
            // A repeated field as a whole sits where its first element does (protobuf insists
            // on an index for repeated fields).
            auto loc = m_tree->GetLocation(fd, fd->is_repeated() ? std::max(index, 0) : index);
            if (loc.line >= 0)
                return {loc.line + 1, loc.column + 1};
        }
        return {m_line, m_column};
    }

    std::string PathOf(const std::string& field, int index = -1) const
    {
        std::string p = m_path.empty() ? field : m_path + "." + field;
        if (index >= 0)
            p += "[" + std::to_string(index) + "]";
        return p;
    }

  private:
    const FieldDescriptor* Field(const std::string& field) const
    {
        const FieldDescriptor* fd = m_msg.GetDescriptor()->FindFieldByName(field);
        assert(fd != nullptr && "the validator names a field the schema lacks");
        return fd;
    }

    const Message& m_msg;
    const ParseInfoTree* m_tree;
    std::string m_path;
    int m_line;
    int m_column;
};

class Checker
{
  public:
    Checker(const SourceMap& source, const ScenarioCatalog& catalog, DiagnosticList* diagnostics)
      : m_source(source)
      , m_catalog(catalog)
      , m_diagnostics(diagnostics)
    {
    }

    /// Checks `s` part by part (scenario-validator.cc).
    void Run(const Scenario& s, ResolvedScenario* out);

  private:
    // Reports `message` at `field` (element `index`) of `n`.
    void Error(const Node& n, const std::string& field, int index, const std::string& message)
    {
        auto [line, column] = n.Location(field, index);
        Report(n.PathOf(field, index), line, column, message);
    }
    void Error(const Node& n, const std::string& field, const std::string& message)
    {
        Error(n, field, -1, message);
    }
    // Reports `message` at the message `n` itself.
    void ErrorAt(const Node& n, const std::string& message)
    {
        Report(n.path(), n.line(), n.column(), message);
    }
    // A problem that does not stop the run: it goes to ResolvedScenario::warnings.
    void Warn(const Node& n, const std::string& field, const std::string& message)
    {
        auto [line, column] = n.Location(field);
        Diagnostic d = Make(n.PathOf(field), line, column, message);
        if (m_warnings != nullptr)
            m_warnings->push_back(d.ToString());
    }
    Diagnostic Make(const std::string& path, int line, int column, const std::string& message)
    {
        Diagnostic d;
        d.file = m_source.file();
        d.origin = m_source.OverrideFor(path);
        d.line = d.origin.empty() ? line : 0;
        d.column = d.origin.empty() ? column : 0;
        d.field = path;
        d.message = message;
        return d;
    }
    void Report(const std::string& path, int line, int column, const std::string& message)
    {
        m_diagnostics->Add(Make(path, line, column, message));
    }

    bool IntIn(const Node& n, const char* field, int64_t v, int64_t lo, int64_t hi)
    {
        if (v >= lo && v <= hi)
            return true;
        Error(n, field,
              "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                  std::to_string(v) + (v == 0 ? " (missing or 0)" : ""));
        return false;
    }
    bool DoubleIn(const Node& n, const char* field, double v, double lo, bool lo_open, double hi,
                  bool hi_open)
    {
        const bool ok =
            std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
        if (ok)
            return true;
        Error(n, field,
              std::string("must be in ") + (lo_open ? "(" : "[") + Num(lo) + ", " + Num(hi) +
                  (hi_open ? ")" : "]") + ", got " + Num(v));
        return false;
    }
    bool Choice(const Node& n, const char* field, const std::string& v,
                const std::vector<std::string>& allowed, const char* what = "value")
    {
        if (Contains(allowed, v))
            return true;
        Error(n, field,
              (v.empty() ? std::string("missing")
                         : "unknown " + std::string(what) + " \"" + v + "\"") +
                  "; allowed: " + Join(allowed));
        return false;
    }
    bool Identifier(const Node& n, const char* field, int index, const std::string& v)
    {
        if (IsIdentifier(v))
            return true;
        Error(n, field, index,
              (v.empty() ? std::string("missing")
               : IsDotName(v)
                   ? "bad name \"" + v + "\" (\".\" and \"..\" are folder names, not names)"
                   : "bad name \"" + v + "\"") +
                  "; allowed: 1-64 characters of A-Z a-z 0-9 . _ -, other than \".\" and \"..\"");
        return false;
    }

    // Each check reports the problems of its part of the scenario and fills that part of the
    // ResolvedScenario; Run calls them in the order of the file (diagnostics keep that order).

    // scenario-validator-workload.cc
    void CheckWorkload(const Node& n, const Workload& w, ResolvedWorkload* out);
    void CheckOptimizer(const Node& n, const Optimizer& o, uint32_t steps,
                        hilo::OptimizerConfig* out);

    // scenario-validator-network.cc
    bool CheckLinkFields(const Node& n, const Link& link);
    // The flow model has no queues: queue settings on `link` are a warning under it.
    void WarnFlowQueue(const Node& n, const Link& link);
    void CheckNetwork(const Node& n, const Network& net, ResolvedNetwork* out);

    // scenario-validator-nodes.cc
    /// llm_profile against the catalog; modelled token counts need one.
    void CheckLlmProfile(const Node& root, const Scenario& s, ResolvedScenario* out);
    /// learner: GPU, GPUs, parallel mode, micro_batch_sequences (needs out->workload).
    void CheckLearner(const Node& root, const Scenario& s, ResolvedScenario* out);
    void CheckWorkers(const Node& root, const Scenario& s, const ResolvedNetwork& net,
                      std::vector<ResolvedWorker>* out);
    /// learner.micro_batch_sequences unset over a round of more than kOnePassWarnSequences
    /// sequences: a warning that names the round's size and the setting that bounds it.
    void WarnOfOneLargeGradientPass(const Node& learner, const Scenario& s,
                                    const ResolvedScenario& sc);

    // scenario-validator-mode.cc
    /// mode: max_staleness, max_sim_time.
    void CheckMode(const Node& root, const Scenario& s, ResolvedScenario* out);

    // scenario-validator-arms.cc
    void CheckArms(const Node& root, const Scenario& s, const ResolvedWorkload& workload,
                   std::vector<ResolvedArm>* out);
    void CheckCompressor(const Node& arm_node, const Arm& arm, uint32_t rank, uint32_t d_model);

    // scenario-validator-faults.cc (needs out->workers, network and max_sim_time)
    void CheckFaults(const Node& root, const Scenario& s, const ResolvedScenario& sc,
                     std::vector<ResolvedFault>* out);
    bool CheckFaultTarget(const Node& fn, const Fault& f, const ResolvedScenario& sc,
                          ResolvedFault* out);

    // scenario-validator-nodes.cc (needs the arms)
    /// llm_lora_experts needs an MoE profile; the modelled LLM (at the largest training rank of
    /// any arm) must fit each GPU of the learner (training) and of every worker group (rollout).
    void CheckNodeMemory(const Node& root, const Scenario& s, const ResolvedScenario& sc);

    // scenario-checker.cc
    /// A duration field: parsed into `out` when set (and > 0); empty leaves `out` unset.
    bool PositiveTime(const Node& n, const char* field, const std::string& text,
                      std::optional<ns3::Time>* out);

    const SourceMap& m_source;
    const ScenarioCatalog& m_catalog;
    DiagnosticList* m_diagnostics;
    std::vector<std::string>* m_warnings{nullptr};
};

} // namespace scenario_check
} // namespace hilosim

#endif // HILOSIM_SCENARIO_SCENARIO_CHECKER_H

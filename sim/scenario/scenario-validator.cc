#include "sim/scenario/scenario-validator.h"

#include "sim/net/flow/tcp-flow-model.h"
#include "sim/net/units.h"
#include "sim/scenario/budget-text.h"

#include "hilo/compress/compressor-factory.h"
#include "hilo/core/adapter-layout.h"
#include "models/compute-model.h"
#include "models/fortune-corpus.h"
#include "models/gpu-node.h"
#include "models/workload.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

namespace hilosim
{
namespace
{

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using ParseInfoTree = google::protobuf::TextFormat::ParseInfoTree;

const std::vector<std::string> kWorkloadKinds = {"distill", "grpo"};
const std::vector<std::string> kTopologies = {"star", "regions", "relay"};
const std::vector<std::string> kGrpoTasks = {"residue_stride", "residue_chain", "randomwalks"};
const std::vector<std::string> kTeacherKinds = {"planted", "finetuned"};
// Graph nodes of the randomwalks task (models::WorkloadConfig::walk_nodes), one token each.
const int32_t kWalkNodes = static_cast<int32_t>(models::WorkloadConfig().walk_nodes);
const std::vector<std::string> kRelayForwarding = {"stream", "store_and_forward"};
const std::vector<std::string> kOptimizerKinds = {"adamw", "sgd"};
// A learner's round above this many sequences in one gradient pass gets a warning: at 1,024
// quickstart workers (4,096 sequences a round) one pass took 4.2x the run's CPU and 6x its peak
// memory of passes of 256 (results/sim/cost-table.md, "One gradient pass or passes of 256").
constexpr uint64_t kOnePassWarnSequences = 1024;
const std::vector<std::string> kSchedules = {"constant", "linear_warmup", "cosine"};
const std::vector<std::string> kStrategies = {"full", "hilo", "delta", "primal"};
const std::vector<std::string> kNetworkModels = {"packet", "flow"};
// Explicit socket buffers: below 16 KiB a window holds too few segments to model TCP; above
// 256 MiB (a 10 Gbps path with a 200 ms RTT) ns-3's receive window would pass its 1 GiB limit.
constexpr uint64_t kMinTcpBufferBytes = 16 * 1024;
constexpr uint64_t kMaxTcpBufferBytes = 256 * 1024 * 1024;
const std::vector<std::string> kFaultKinds = {"worker_crash",   "worker_join", "link_down",
                                              "loss_burst",     "corrupt",     "replay_divergence",
                                              "learner_restart"};

std::string
Join(const std::vector<std::string>& items)
{
    std::string out;
    for (const std::string& s : items)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

bool
Contains(const std::vector<std::string>& items, const std::string& s)
{
    return std::find(items.begin(), items.end(), s) != items.end();
}

std::string
Num(double v)
{
    std::ostringstream os;
    os << v;
    return os.str();
}

// "." and "..": names become folder and file names (results/runs/<scenario>, pcap folders per
// arm), where these two mean this folder and its parent.
bool
IsDotName(const std::string& s)
{
    return s == "." || s == "..";
}

// 1-64 characters of [A-Za-z0-9._-], not "." or "..".
bool
IsIdentifier(const std::string& s)
{
    if (s.empty() || s.size() > 64 || IsDotName(s))
        return false;
    for (char c : s)
    {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

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
        Diagnostic d;
        d.file = m_source.file();
        d.origin = m_source.OverrideFor(path);
        d.line = d.origin.empty() ? line : 0;
        d.column = d.origin.empty() ? column : 0;
        d.field = path;
        d.message = message;
        m_diagnostics->Add(std::move(d));
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

    void CheckWorkload(const Node& n, const Workload& w, ResolvedWorkload* out);
    void CheckOptimizer(const Node& n, const Optimizer& o, uint32_t steps,
                        hilo::OptimizerConfig* out);
    bool CheckLinkFields(const Node& n, const Link& link);
    // The flow model has no queues: queue settings on `link` are a warning under it.
    void WarnFlowQueue(const Node& n, const Link& link);
    void CheckNetwork(const Node& n, const Network& net, ResolvedNetwork* out);
    void CheckWorkers(const Node& root, const Scenario& s, const ResolvedNetwork& net,
                      std::vector<ResolvedWorker>* out);
    /// learner.micro_batch_sequences unset over a round of more than kOnePassWarnSequences
    /// sequences: a warning that names the round's size and the setting that bounds it.
    void WarnOfOneLargeGradientPass(const Node& learner, const Scenario& s,
                                    const ResolvedScenario& sc);
    void CheckArms(const Node& root, const Scenario& s, const ResolvedWorkload& workload,
                   std::vector<ResolvedArm>* out);
    void CheckCompressor(const Node& arm_node, const Arm& arm, uint32_t rank, uint32_t d_model);
    void CheckFaults(const Node& root, const Scenario& s, const ResolvedScenario& sc,
                     std::vector<ResolvedFault>* out);
    bool CheckFaultTarget(const Node& fn, const Fault& f, const ResolvedScenario& sc,
                          ResolvedFault* out);
    /// llm_lora_experts needs an MoE profile; the modelled LLM (at the largest training rank of
    /// any arm) must fit each GPU of the learner (training) and of every worker group (rollout).
    void CheckNodeMemory(const Node& root, const Scenario& s, const ResolvedScenario& sc);
    /// A duration field: parsed into `out` when set (and > 0); empty leaves `out` unset.
    bool PositiveTime(const Node& n, const char* field, const std::string& text,
                      std::optional<ns3::Time>* out);

    const SourceMap& m_source;
    const ScenarioCatalog& m_catalog;
    DiagnosticList* m_diagnostics;
    std::vector<std::string>* m_warnings{nullptr};
};

// A complete link (every field valid, bandwidth set) in typed values.
hilosim::LinkSpec
ToLinkSpec(const Link& l)
{
    hilosim::LinkSpec out;
    auto rate = hilosim::ParseDataRate(l.bandwidth());
    if (rate.ok())
        out.rate = *rate;
    auto delay = hilosim::ParseTime(l.delay().empty() ? "0ms" : l.delay());
    if (delay.ok())
        out.delay = *delay;
    out.loss_rate = l.has_loss() ? l.loss() : 0.0;
    out.mtu = static_cast<uint32_t>(l.has_mtu() ? l.mtu() : 1500);
    out.queue_disc = l.queue().empty() ? "fifo" : l.queue();
    out.queue_packets = static_cast<uint32_t>(l.has_queue_packets() ? l.queue_packets() : 1000);
    return out;
}

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

    if (!s.llm_profile().empty())
    {
        Choice(root, "llm_profile", s.llm_profile(), m_catalog.llms, "LLM profile");
    }
    out->llm_profile = s.llm_profile();
    const Workload& w = s.workload();
    if ((w.modelled_prompt_tokens() > 0 || w.modelled_gen_tokens() > 0) && s.llm_profile().empty())
    {
        Error(root.Child("workload"),
              w.modelled_gen_tokens() > 0 ? "modelled_gen_tokens" : "modelled_prompt_tokens",
              "needs llm_profile: modelled token counts scale the modelled LLM's compute times");
    }

    const Node learner = root.Child("learner");
    Choice(learner, "gpu", s.learner().gpu(), m_catalog.gpus, "GPU");
    out->learner_gpu = s.learner().gpu();
    if (IntIn(learner, "gpus", s.learner().gpus(), 1, 64))
        out->learner_gpus = static_cast<uint32_t>(s.learner().gpus());
    Choice(learner, "parallel", s.learner().parallel(), models::NodeParallelNames(),
           "parallel mode");
    out->learner_parallel = s.learner().parallel();
    const int32_t micro = s.learner().micro_batch_sequences();
    if (s.learner().has_micro_batch_sequences() &&
        IntIn(learner, "micro_batch_sequences", micro, 1, 1 << 20))
    {
        const uint32_t group = std::max<uint32_t>(1, out->workload.group_size);
        if (static_cast<uint32_t>(micro) % group != 0)
            Error(learner, "micro_batch_sequences",
                  "must be a multiple of workload.group_size (" + std::to_string(group) +
                      "): a gradient pass holds whole groups, got " + std::to_string(micro));
        else
            out->learner_micro_batch_sequences = static_cast<uint32_t>(micro);
    }
    out->llm_lora_experts = s.llm_lora_experts();

    CheckNetwork(root.Child("network"), s.network(), &out->network);
    CheckWorkers(root, s, out->network, &out->workers);
    WarnOfOneLargeGradientPass(learner, s, *out);

    const Node mode = root.Child("mode");
    IntIn(mode, "max_staleness", s.mode().max_staleness(), 0, 1000);
    out->max_staleness = static_cast<uint32_t>(std::max(0, s.mode().max_staleness()));
    std::optional<ns3::Time> max_sim_time;
    if (s.mode().max_sim_time().empty())
        Error(mode, "max_sim_time", "missing; allowed: a duration > 0, e.g. \"10min\"");
    else if (PositiveTime(mode, "max_sim_time", s.mode().max_sim_time(), &max_sim_time))
        out->max_sim_time = *max_sim_time;
    std::optional<ns3::Time> round_timeout;
    if (!s.mode().round_timeout().empty() &&
        PositiveTime(mode, "round_timeout", s.mode().round_timeout(), &round_timeout))
        out->round_timeout = *round_timeout;

    CheckArms(root, s, out->workload, &out->arms);
    CheckFaults(root, s, *out, &out->faults);
    CheckNodeMemory(root, s, *out);
}

void
Checker::WarnOfOneLargeGradientPass(const Node& learner, const Scenario& s,
                                    const ResolvedScenario& sc)
{
    if (s.learner().has_micro_batch_sequences())
        return;
    const uint64_t group = std::max<uint32_t>(1, sc.workload.group_size);
    const uint64_t sequences = sc.workers.size() * sc.workload.prompts_per_worker * group;
    if (sequences <= kOnePassWarnSequences)
        return;
    Warn(learner, "micro_batch_sequences",
         "unset, so the learner's gradient is one pass over a round's " +
             std::to_string(sequences) + " sequences (" + std::to_string(sc.workers.size()) +
             " workers x prompts_per_worker " + std::to_string(sc.workload.prompts_per_worker) +
             " x group_size " + std::to_string(group) +
             "), whose autograd graph grows with the fleet; set it (e.g. 256, a multiple of "
             "group_size) to bound the learner's memory and CPU: the same gradient up to float "
             "rounding");
}

void
Checker::CheckNodeMemory(const Node& root, const Scenario& s, const ResolvedScenario& sc)
{
    if (s.llm_lora_experts())
    {
        auto llm = models::FindLlm(s.llm_profile());
        if (!llm.ok() || !llm->moe())
        {
            Error(root, "llm_lora_experts",
                  "needs an llm_profile with experts (mixture of experts, `hilo-sim list "
                  "models`)" +
                      std::string(
                          s.llm_profile().empty() ? "" : "; \"" + s.llm_profile() + "\" has none"));
            return;
        }
    }
    // The modelled model must fit every GPU of every node (the tiny model always does).
    if (sc.llm_profile.empty() || sc.arms.empty())
        return;
    auto llm = models::FindLlm(sc.llm_profile);
    if (!llm.ok())
        return; // reported at llm_profile
    uint32_t rank = 0;
    for (const ResolvedArm& arm : sc.arms)
        rank = std::max(rank, arm.training_rank);
    models::ComputeOptions options;
    if (sc.llm_lora_experts)
        options.targets.push_back("experts");
    const int64_t context =
        static_cast<int64_t>(sc.workload.modelled_prompt_tokens + sc.workload.modelled_gen_tokens);
    auto check = [&](const Node& n, const std::string& gpu, int64_t gpus,
                     const std::string& parallel, models::NodeWork work)
    {
        auto profile = models::FindGpu(gpu);
        auto how = models::ParseNodeParallel(parallel);
        if (!profile.ok() || !how.ok() || gpus < 1)
            return; // reported at gpu, gpus or parallel
        const hilo::Status fits = models::CheckNodeMemory(models::GpuNode(*profile, gpus, *how),
                                                          *llm, rank, context, work, options);
        if (!fits.ok())
            Error(n, "gpus", fits.message());
    };
    check(root.Child("learner"), s.learner().gpu(), s.learner().gpus(), s.learner().parallel(),
          models::NodeWork::kTrain);
    for (int g = 0; g < s.workers_size(); ++g)
    {
        const WorkerGroup& group = s.workers(g);
        check(root.Child("workers", g), group.gpu(), group.gpus(), group.parallel(),
              models::NodeWork::kRollout);
    }
}

bool
Checker::PositiveTime(const Node& n, const char* field, const std::string& text,
                      std::optional<ns3::Time>* out)
{
    if (text.empty())
        return true;
    auto t = hilosim::ParseTime(text);
    if (!t.ok())
    {
        Error(n, field, t.status().message());
        return false;
    }
    if (!t->IsStrictlyPositive())
    {
        Error(n, field, "must be > 0, got \"" + text + "\"");
        return false;
    }
    *out = *t;
    return true;
}

bool
Checker::CheckFaultTarget(const Node& fn, const Fault& f, const ResolvedScenario& sc,
                          ResolvedFault* out)
{
    const std::string& t = f.target();
    out->target_text = t;
    const bool link = f.kind() == "link_down" || f.kind() == "loss_burst" || f.kind() == "corrupt";
    const bool learner = f.kind() == "learner_restart";
    const std::string allowed =
        learner ? "\"learner\""
        : link  ? "\"worker:N\" (a worker's access link), \"region:NAME\" (a region's WAN link) "
                  "or \"uplink\" (the learner uplink)"
                : "\"worker:N\" with N a worker index";
    auto bad = [&](const std::string& why)
    {
        Error(fn, "target", (t.empty() ? std::string("missing") : why) + "; allowed: " + allowed);
        return false;
    };
    if (learner)
    {
        if (t != "learner")
            return bad("a learner_restart hits the learner, not \"" + t + "\"");
        out->target = FaultTargetKind::kLearner;
        return true;
    }
    if (t.rfind("worker:", 0) == 0)
    {
        const std::string digits = t.substr(7);
        const bool numeric =
            !digits.empty() && digits.size() <= 6 &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!numeric)
            return bad("bad worker index in \"" + t + "\"");
        const uint64_t w = std::stoull(digits);
        if (w >= sc.workers.size())
        {
            return bad("worker " + digits + " does not exist (the scenario has " +
                       std::to_string(sc.workers.size()) + " workers, 0-based)");
        }
        out->target = link ? FaultTargetKind::kWorkerLink : FaultTargetKind::kWorker;
        out->index = static_cast<uint32_t>(w);
        return true;
    }
    if (!link)
        return bad("\"" + t + "\" is not a worker");
    if (t == "uplink")
    {
        if (!sc.network.learner_uplink)
            return bad("the scenario has no network.learner_uplink");
        out->target = FaultTargetKind::kUplink;
        return true;
    }
    if (t.rfind("region:", 0) == 0)
    {
        const std::string name = t.substr(7);
        for (size_t r = 0; r < sc.network.regions.size(); ++r)
        {
            if (sc.network.regions[r].name == name)
            {
                out->target = FaultTargetKind::kRegionWan;
                out->index = static_cast<uint32_t>(r);
                return true;
            }
        }
        return bad("no region named \"" + name + "\"");
    }
    return bad("unknown target \"" + t + "\"");
}

void
Checker::CheckFaults(const Node& root, const Scenario& s, const ResolvedScenario& sc,
                     std::vector<ResolvedFault>* out)
{
    // Field by field first; then what only the whole list can tell (joins, overlapping downs).
    std::vector<std::pair<int, ResolvedFault>> resolved;
    for (int i = 0; i < s.faults_size(); ++i)
    {
        const Fault& f = s.faults(i);
        const Node fn = root.Child("faults", i);
        if (sc.network.model == NetworkModel::kFlow)
        {
            // The flow model has no packets to lose or connections to cut.
            Error(fn, "kind",
                  "faults need network.model: \"packet\"; the flow model cannot inject them");
            continue;
        }
        if (!Choice(fn, "kind", f.kind(), kFaultKinds, "fault kind"))
            continue;
        ResolvedFault rf;
        rf.kind = static_cast<FaultKind>(
            std::find(kFaultKinds.begin(), kFaultKinds.end(), f.kind()) - kFaultKinds.begin());
        bool ok = true;
        if (f.at().empty())
        {
            Error(fn, "at", "missing; allowed: a time >= 0, e.g. \"20s\"");
            ok = false;
        }
        else
        {
            auto at = hilosim::ParseTime(f.at());
            if (at.ok() && sc.max_sim_time.IsStrictlyPositive() && *at >= sc.max_sim_time)
            {
                Error(fn, "at",
                      "\"" + f.at() + "\" is not before mode.max_sim_time (\"" +
                          s.mode().max_sim_time() +
                          "\"): the fault would never happen; allowed: a time in [0, "
                          "max_sim_time)");
                ok = false;
            }
            else if (at.ok())
                rf.at = *at;
            else
            {
                Error(fn, "at", at.status().message());
                ok = false;
            }
        }
        ok &= CheckFaultTarget(fn, f, sc, &rf);
        const bool link = rf.kind == FaultKind::kLinkDown || rf.kind == FaultKind::kLossBurst ||
                          rf.kind == FaultKind::kCorrupt;
        auto unused = [&](const char* field, bool set)
        {
            if (!set)
                return true;
            Error(fn, field, std::string("does not apply to a ") + f.kind() + " fault; remove it");
            return false;
        };
        if (link)
            ok &= PositiveTime(fn, "duration", f.duration(), &rf.duration);
        else
            ok &= unused("duration", !f.duration().empty());
        if (rf.kind == FaultKind::kWorkerCrash || rf.kind == FaultKind::kLearnerRestart)
        {
            ok &= PositiveTime(fn, "restart_after", f.restart_after(), &rf.restart_after);
            if (rf.kind == FaultKind::kLearnerRestart && f.restart_after().empty())
            {
                Error(fn, "restart_after",
                      "missing: how long the learner is down, > 0 (e.g. \"5s\")");
                ok = false;
            }
        }
        else
        {
            ok &= unused("restart_after", !f.restart_after().empty());
        }
        if (rf.kind == FaultKind::kLossBurst || rf.kind == FaultKind::kCorrupt)
        {
            ok &= DoubleIn(fn, "rate", f.rate(), 0, true, 1, false);
            rf.rate = f.rate();
        }
        else
        {
            ok &= unused("rate", f.rate() != 0);
        }
        if (rf.kind == FaultKind::kCorrupt)
            rf.after_tcp = f.after_tcp();
        else
            ok &= unused("after_tcp", f.after_tcp());
        if (ok)
            resolved.emplace_back(i, std::move(rf));
    }

    const auto where = [&](int j)
    {
        return "faults[" + std::to_string(j) + "] (line " +
               std::to_string(root.Child("faults", j).line()) + ")";
    };
    // A worker joins at most once, and nothing hits it before it has joined.
    std::map<uint32_t, int> join_of; // worker -> index into `resolved`
    for (size_t k = 0; k < resolved.size(); ++k)
    {
        const auto& [i, rf] = resolved[k];
        if (rf.kind != FaultKind::kWorkerJoin)
            continue;
        auto [it, inserted] = join_of.emplace(rf.index, static_cast<int>(k));
        if (!inserted)
        {
            Error(root.Child("faults", i), "target",
                  "worker " + std::to_string(rf.index) + " already joins in " +
                      where(resolved[it->second].first) + "; a worker joins once");
        }
    }
    // Intervals in which a worker (or the learner) is down after a crash.
    struct Down
    {
        ns3::Time from;
        std::optional<ns3::Time> until; // none: for good
        int fault;
    };
    std::map<uint32_t, std::vector<Down>> downs;
    std::vector<Down> learner_downs;
    std::vector<size_t> by_time(resolved.size());
    for (size_t k = 0; k < by_time.size(); ++k)
        by_time[k] = k;
    std::stable_sort(by_time.begin(), by_time.end(),
                     [&](size_t a, size_t b)
                     { return resolved[a].second.at < resolved[b].second.at; });
    std::vector<bool> keep(resolved.size(), false);
    for (size_t k : by_time)
    {
        const auto& [i, rf] = resolved[k];
        const Node fn = root.Child("faults", i);
        bool ok = true;
        if (rf.target == FaultTargetKind::kWorker && rf.kind != FaultKind::kWorkerJoin)
        {
            auto join = join_of.find(rf.index);
            if (join != join_of.end() && rf.at < resolved[join->second].second.at)
            {
                Error(fn, "at",
                      "worker " + std::to_string(rf.index) + " is absent until it joins at " +
                          s.faults(resolved[join->second].first).at() + " (" +
                          where(resolved[join->second].first) + "); nothing to hit before that");
                continue;
            }
            for (const Down& d : downs[rf.index])
            {
                if (rf.at >= d.from && (!d.until || rf.at < *d.until))
                {
                    Error(fn, "at",
                          "worker " + std::to_string(rf.index) + " is down then (crashed in " +
                              where(d.fault) + (d.until ? ")" : ", never to restart)"));
                    ok = false;
                    break;
                }
            }
            if (ok && rf.kind == FaultKind::kWorkerCrash)
            {
                downs[rf.index].push_back({rf.at,
                                           rf.restart_after
                                               ? std::optional<ns3::Time>(rf.at + *rf.restart_after)
                                               : std::nullopt,
                                           i});
            }
        }
        if (rf.kind == FaultKind::kLearnerRestart)
        {
            for (const Down& d : learner_downs)
            {
                if (rf.at >= d.from && rf.at < *d.until)
                {
                    Error(fn, "at",
                          "the learner is down then (restarting in " + where(d.fault) + ")");
                    ok = false;
                    break;
                }
            }
            if (ok)
                learner_downs.push_back({rf.at, rf.at + *rf.restart_after, i});
        }
        keep[k] = ok;
    }
    for (size_t k = 0; k < resolved.size(); ++k)
    {
        if (keep[k])
            out->push_back(std::move(resolved[k].second));
    }
}

void
Checker::CheckWorkload(const Node& n, const Workload& w, ResolvedWorkload* out)
{
    if (Choice(n, "kind", w.kind(), kWorkloadKinds, "workload"))
    {
        out->kind = w.kind() == "grpo" ? WorkloadKind::kGrpo : WorkloadKind::kDistill;
    }
    IntIn(n, "steps", w.steps(), 1, 1000000);
    out->steps = static_cast<uint32_t>(std::max(0, w.steps()));

    const Node m = n.Child("model");
    const ModelShape& ms = w.model();
    IntIn(m, "vocab", ms.vocab(), 2, 65536);
    IntIn(m, "d_model", ms.d_model(), 8, 8192);
    IntIn(m, "layers", ms.layers(), 1, 64);
    const bool heads_ok = IntIn(m, "heads", ms.heads(), 1, 128);
    IntIn(m, "context", ms.context(), 2, 8192);
    if (heads_ok && ms.d_model() > 0 && ms.d_model() % ms.heads() != 0)
    {
        Error(m, "d_model",
              "must be a multiple of heads (" + std::to_string(ms.heads()) + "), got " +
                  std::to_string(ms.d_model()));
    }
    out->model = {static_cast<uint32_t>(std::max(0, ms.vocab())),
                  static_cast<uint32_t>(std::max(0, ms.d_model())),
                  static_cast<uint32_t>(std::max(0, ms.layers())),
                  static_cast<uint32_t>(std::max(0, ms.heads())),
                  static_cast<uint32_t>(std::max(0, ms.context()))};

    const Node lora = n.Child("lora");
    IntIn(lora, "rank", w.lora().rank(), 1, 4096);
    DoubleIn(lora, "alpha", w.lora().alpha(), 0, true, 1e6, false);
    out->lora_rank = static_cast<uint32_t>(std::max(0, w.lora().rank()));
    out->lora_alpha = w.lora().alpha();

    IntIn(n, "prompts_per_worker", w.prompts_per_worker(), 1, 4096);
    IntIn(n, "group_size", w.group_size(), 1, 1024);
    if (ms.context() >= 2)
    {
        IntIn(n, "gen_tokens", w.gen_tokens(), 1, ms.context() - 1);
    }
    DoubleIn(n, "temperature", w.temperature(), 0, true, 10, false);
    IntIn(n, "eval_prompts", w.eval_prompts(), 1, 100000);
    IntIn(n, "eval_every", w.eval_every(), 1, 1000000);
    DoubleIn(n, "clip_norm", w.clip_norm(), 0, false, 1e6, false);
    out->prompts_per_worker = static_cast<uint32_t>(std::max(0, w.prompts_per_worker()));
    out->group_size = static_cast<uint32_t>(std::max(0, w.group_size()));
    out->gen_tokens = static_cast<uint32_t>(std::max(0, w.gen_tokens()));
    out->temperature = w.temperature();
    out->eval_prompts = static_cast<uint32_t>(std::max(0, w.eval_prompts()));
    out->eval_every = static_cast<uint32_t>(std::max(0, w.eval_every()));
    out->clip_norm = w.clip_norm();
    IntIn(n, "modelled_prompt_tokens", w.modelled_prompt_tokens(), 0, 1000000);
    IntIn(n, "modelled_gen_tokens", w.modelled_gen_tokens(), 0, 1000000);
    if (w.modelled_prompt_tokens() > 0 && w.modelled_gen_tokens() == 0)
    {
        Error(n, "modelled_gen_tokens",
              "must be set (> 0) when modelled_prompt_tokens is: the modelled counts replace the "
              "real ones only together");
    }
    out->modelled_prompt_tokens = static_cast<uint32_t>(std::max(0, w.modelled_prompt_tokens()));
    out->modelled_gen_tokens = static_cast<uint32_t>(std::max(0, w.modelled_gen_tokens()));

    if (w.kind() == "grpo")
    {
        const Node g = n.Child("grpo");
        Choice(g, "task", w.grpo().task(), kGrpoTasks, "GRPO task");
        const bool walks = w.grpo().task() == "randomwalks";
        if (walks)
        {
            if (w.grpo().has_modulus())
            {
                Error(g, "modulus", "applies to the residue tasks only (remove it)");
            }
            if (ms.vocab() < kWalkNodes)
            {
                Error(m, "vocab",
                      "must be >= " + std::to_string(kWalkNodes) +
                          " for task \"randomwalks\" (one token per graph node), got " +
                          std::to_string(ms.vocab()));
            }
        }
        else
        {
            IntIn(g, "modulus", w.grpo().modulus(), 2, std::max(2, ms.vocab()));
        }
        DoubleIn(g, "entropy_coef", w.grpo().entropy_coef(), 0, false, 10, false);
        out->grpo_task = walks ? "randomwalks" : "residue";
        out->grpo_prompt_stride = w.grpo().task() != "residue_chain";
        out->grpo_modulus = static_cast<uint32_t>(std::max(0, w.grpo().modulus()));
        out->grpo_entropy_coef = w.grpo().entropy_coef();
    }
    else if (w.has_grpo())
    {
        Error(n, "grpo",
              "only workload kind \"grpo\" has a GRPO task; this workload is \"" + w.kind() +
                  "\" (remove grpo)");
    }
    if (w.kind() == "distill")
    {
        const Node t = n.Child("teacher");
        Choice(t, "kind", w.teacher().kind(), kTeacherKinds, "teacher");
        out->teacher_kind = w.teacher().kind();
        if (w.teacher().kind() == "finetuned")
        {
            if (w.teacher().has_delta_rank() || w.teacher().has_decay())
            {
                Error(t, w.teacher().has_delta_rank() ? "delta_rank" : "decay",
                      "applies to the planted teacher only (remove it)");
            }
            const std::pair<const char*, int64_t> shape[] = {{"vocab", ms.vocab()},
                                                             {"d_model", ms.d_model()},
                                                             {"layers", ms.layers()},
                                                             {"heads", ms.heads()},
                                                             {"context", ms.context()}};
            const int64_t want[] = {models::TextBaseShape::kVocab, models::TextBaseShape::kDModel,
                                    models::TextBaseShape::kLayers, models::TextBaseShape::kHeads,
                                    models::TextBaseShape::kContext};
            for (size_t i = 0; i < 5; ++i)
            {
                if (shape[i].second != want[i])
                {
                    Error(m, shape[i].first,
                          "must be " + std::to_string(want[i]) +
                              " with the finetuned teacher (the shape of the pretrained text "
                              "base), got " +
                              std::to_string(shape[i].second));
                }
            }
        }
        else
        {
            IntIn(t, "delta_rank", w.teacher().delta_rank(), 1, 4096);
            DoubleIn(t, "decay", w.teacher().decay(), 0, true, 1, false);
            out->teacher_delta_rank = static_cast<uint32_t>(std::max(0, w.teacher().delta_rank()));
            out->teacher_decay = w.teacher().decay();
        }
    }
}

void
Checker::CheckOptimizer(const Node& n, const Optimizer& o, uint32_t steps,
                        hilo::OptimizerConfig* out)
{
    bool ok = Choice(n, "kind", o.kind(), kOptimizerKinds, "optimizer");
    ok &= Choice(n, "schedule", o.schedule(), kSchedules, "schedule");
    ok &= DoubleIn(n, "lr", o.lr(), 0, false, 10, false);
    ok &= IntIn(n, "warmup_steps", o.warmup_steps(), 0, std::max<int64_t>(steps, 0));
    ok &= DoubleIn(n, "beta1", o.beta1(), 0, false, 1, true);
    ok &= DoubleIn(n, "beta2", o.beta2(), 0, false, 1, true);
    ok &= DoubleIn(n, "eps", o.eps(), 0, true, 1, false);
    ok &= DoubleIn(n, "weight_decay", o.weight_decay(), 0, false, 10, false);
    ok &= DoubleIn(n, "momentum", o.momentum(), 0, false, 1, true);
    ok &= DoubleIn(n, "min_lr_ratio", o.min_lr_ratio(), 0, false, 1, false);
    if (!ok)
    {
        return;
    }
    out->kind = *hilo::ParseOptimizerKind(o.kind());
    out->lr.kind = *hilo::ParseLrScheduleKind(o.schedule());
    out->lr.base_lr = static_cast<float>(o.lr());
    out->lr.warmup_steps = o.warmup_steps();
    out->lr.total_steps = std::max<int64_t>(steps, 1);
    out->lr.min_lr_ratio = static_cast<float>(o.min_lr_ratio());
    out->beta1 = static_cast<float>(o.beta1());
    out->beta2 = static_cast<float>(o.beta2());
    out->eps = static_cast<float>(o.eps());
    out->weight_decay = static_cast<float>(o.weight_decay());
    out->momentum = static_cast<float>(o.momentum());
    out->dampening = 0.0f;
    hilo::Status s = out->Validate();
    if (!s.ok())
    {
        ErrorAt(n, s.message());
    }
}

bool
Checker::CheckLinkFields(const Node& n, const Link& link)
{
    bool ok = true;
    if (!link.bandwidth().empty())
    {
        auto bw = hilosim::ParseDataRate(link.bandwidth());
        if (!bw.ok())
        {
            Error(n, "bandwidth", bw.status().message());
            ok = false;
        }
    }
    if (!link.delay().empty())
    {
        auto d = hilosim::ParseTime(link.delay());
        if (!d.ok())
        {
            Error(n, "delay", d.status().message());
            ok = false;
        }
    }
    if (link.has_loss())
        ok &= DoubleIn(n, "loss", link.loss(), 0, false, 1, true);
    if (link.has_mtu())
        ok &= IntIn(n, "mtu", link.mtu(), 576, 9000);
    if (!link.queue().empty())
        ok &= Choice(n, "queue", link.queue(), hilosim::SupportedQueueDiscs(), "queue discipline");
    if (link.has_queue_packets())
        ok &= IntIn(n, "queue_packets", link.queue_packets(), 1, 1000000);
    return ok;
}

void
Checker::CheckNetwork(const Node& n, const Network& net, ResolvedNetwork* out)
{
    if (Choice(n, "topology", net.topology(), kTopologies, "topology"))
    {
        out->topology = net.topology() == "regions" ? TopologyKind::kRegions
                        : net.topology() == "relay" ? TopologyKind::kRelay
                                                    : TopologyKind::kStar;
    }
    auto tcp = hilosim::ParseTcpVariant(net.tcp());
    if (tcp.ok())
    {
        out->tcp = net.tcp();
        out->tcp_type = *tcp;
    }
    else
    {
        Error(n, "tcp", tcp.status().message());
    }
    if (Choice(n, "model", net.model(), kNetworkModels, "network model"))
    {
        out->model = net.model() == "flow" ? NetworkModel::kFlow : NetworkModel::kPacket;
    }
    if (tcp.ok() && net.model() == "flow" && !hilosim::FlowModelBeta(*tcp))
    {
        // Not silently Reno: the flow model knows only loss-based windows cut by a fixed factor.
        Error(n, "tcp",
              "the flow network model cannot model \"" + net.tcp() +
                  "\" (its window follows rate, delay or window-size rules the model does not "
                  "have); allowed with network.model \"flow\": " +
                  Join(hilosim::FlowModelVariants()) + " (or network.model: \"packet\")");
    }
    out->slow_start_after_idle = !net.has_slow_start_after_idle() || net.slow_start_after_idle();
    out->tcp_buffer = net.tcp_buffer();
    if (net.tcp_buffer() != "auto")
    {
        auto bytes = hilosim::ParseBytes(net.tcp_buffer());
        if (!bytes.ok())
        {
            Error(n, "tcp_buffer",
                  bytes.status().message() + "; allowed: \"auto\" or a size such as \"6MiB\"");
        }
        else if (*bytes < kMinTcpBufferBytes || *bytes > kMaxTcpBufferBytes)
        {
            Error(n, "tcp_buffer",
                  "must be \"auto\" or a size in [16KiB, 256MiB], got \"" + net.tcp_buffer() +
                      "\" (" + std::to_string(*bytes) + " bytes)");
        }
        else
        {
            out->tcp_buffer_bytes = *bytes;
        }
    }
    CheckLinkFields(n.Child("worker_link"), net.worker_link());
    const bool flow = net.model() == "flow";
    if (flow)
        WarnFlowQueue(n.Child("worker_link"), net.worker_link());
    if (net.has_learner_uplink())
    {
        const Node up = n.Child("learner_uplink");
        if (flow)
            WarnFlowQueue(up, net.learner_uplink());
        if (CheckLinkFields(up, net.learner_uplink()))
        {
            if (net.learner_uplink().bandwidth().empty())
                Error(up, "bandwidth",
                      "missing: the learner uplink needs a bandwidth (e.g. "
                      "\"1Gbps\"); remove learner_uplink for none");
            else
                out->learner_uplink = ToLinkSpec(net.learner_uplink());
        }
    }
    if (net.topology() == "relay")
    {
        Choice(n, "relay_forwarding", net.relay_forwarding(), kRelayForwarding, "forwarding");
        out->relay_store_and_forward = net.relay_forwarding() == "store_and_forward";
        if (net.model() == "flow" && net.relay_forwarding() == "stream")
        {
            // Not silently store-and-forward: the flow model's relays cannot stream (yet).
            Error(n, "relay_forwarding",
                  "the flow network model forwards whole updates only; set relay_forwarding: "
                  "\"store_and_forward\" (or network.model: \"packet\" for streaming relays)");
        }
    }
    else if (!net.relay_forwarding().empty())
    {
        Error(n, "relay_forwarding",
              "only topology \"relay\" has relays; this scenario's topology is \"" +
                  net.topology() + "\" (remove relay_forwarding)");
    }
    const bool star = net.topology() == "star";
    if (star && net.regions_size() > 0)
    {
        Error(n, "regions", 0,
              "regions are used only by topology \"regions\" or \"relay\"; this scenario's "
              "topology is \"star\"");
    }
    if (!star && Contains(kTopologies, net.topology()) && net.regions_size() == 0)
    {
        Error(n, "topology",
              "topology \"" + net.topology() +
                  "\" needs at least one network.regions entry { name wan lan }");
    }
    std::map<std::string, int> seen;
    for (int i = 0; i < net.regions_size(); ++i)
    {
        const Region& r = net.regions(i);
        const Node rn = n.Child("regions", i);
        if (Identifier(rn, "name", -1, r.name()) && !seen.emplace(r.name(), i).second)
        {
            Error(rn, "name",
                  "duplicate region name \"" + r.name() + "\" (also regions[" +
                      std::to_string(seen[r.name()]) + "])");
        }
        const Node wan = rn.Child("wan");
        bool ok = CheckLinkFields(wan, r.wan());
        if (r.wan().bandwidth().empty())
        {
            Error(wan, "bandwidth",
                  "missing: each region's shared WAN link needs a bandwidth "
                  "(e.g. \"1Gbps\")");
            ok = false;
        }
        ok &= CheckLinkFields(rn.Child("lan"), r.lan());
        if (flow)
        {
            WarnFlowQueue(wan, r.wan());
            WarnFlowQueue(rn.Child("lan"), r.lan());
        }
        if (ok)
        {
            Link lan = net.worker_link();
            lan.MergeFrom(r.lan());
            out->regions.push_back({r.name(), ToLinkSpec(r.wan()), ToLinkSpec(lan)});
        }
    }
}

void
Checker::CheckWorkers(const Node& root, const Scenario& s, const ResolvedNetwork& net,
                      std::vector<ResolvedWorker>* out)
{
    if (s.workers_size() == 0)
    {
        Error(root, "workers",
              "no worker groups: add at least one workers { count: N gpu: \"...\" }");
        return;
    }
    const Network& network = s.network();
    const bool star = network.topology() == "star";
    std::vector<std::string> region_names;
    for (const Region& r : network.regions())
        region_names.push_back(r.name());
    int64_t total = 0;
    for (int g = 0; g < s.workers_size(); ++g)
    {
        const WorkerGroup& group = s.workers(g);
        const Node gn = root.Child("workers", g);
        bool ok = IntIn(gn, "count", group.count(), 1, 4096);
        ok &= Choice(gn, "gpu", group.gpu(), m_catalog.gpus, "GPU");
        ok &= IntIn(gn, "gpus", group.gpus(), 1, 64);
        ok &=
            Choice(gn, "parallel", group.parallel(), models::NodeParallelNames(), "parallel mode");
        int region_index = -1;
        if (star)
        {
            if (!group.region().empty())
            {
                Error(gn, "region",
                      "only topology \"regions\" or \"relay\" places workers in regions; this "
                      "scenario's topology is \"star\" (remove region)");
                ok = false;
            }
        }
        else if (Choice(gn, "region", group.region(), region_names, "region"))
        {
            region_index = static_cast<int>(
                std::find(region_names.begin(), region_names.end(), group.region()) -
                region_names.begin());
        }
        else
        {
            ok = false;
        }
        ok &= CheckLinkFields(gn.Child("link"), group.link());
        if (net.model == NetworkModel::kFlow)
            WarnFlowQueue(gn.Child("link"), group.link());
        Link merged = network.worker_link();
        if (region_index >= 0)
            merged.MergeFrom(network.regions(region_index).lan());
        merged.MergeFrom(group.link());
        if (merged.bandwidth().empty())
        {
            Error(gn, "link",
                  "no bandwidth for this group's links: set network.worker_link.bandwidth (or "
                  "this group's link.bandwidth" +
                      std::string(star ? "" : ", or its region's lan.bandwidth") + ")");
            ok = false;
        }
        if (!ok || group.count() <= 0)
            continue;
        const hilosim::LinkSpec link = ToLinkSpec(merged);
        for (int k = 0; k < group.count(); ++k)
        {
            ResolvedWorker w;
            w.index = static_cast<uint32_t>(total + k);
            w.group = static_cast<uint32_t>(g);
            w.gpu = group.gpu();
            w.gpus = static_cast<uint32_t>(group.gpus());
            w.parallel = group.parallel();
            w.region = group.region();
            w.region_index = region_index;
            w.link = link;
            out->push_back(std::move(w));
        }
        total += group.count();
    }
    if (total > 65536)
    {
        Error(root, "workers",
              "too many workers in all (" + std::to_string(total) + "); allowed: at most 65536");
    }
    // Regions nobody is placed in: a relay would still get its copy of every update over the
    // uplink (an error); a worker-less region of "regions" only adds an unused link (a warning).
    if (star)
        return;
    std::vector<int64_t> placed(region_names.size(), 0);
    for (const WorkerGroup& group : s.workers())
    {
        auto it = std::find(region_names.begin(), region_names.end(), group.region());
        if (it != region_names.end() && group.count() > 0)
            placed[it - region_names.begin()] += group.count();
    }
    for (size_t r = 0; r < placed.size(); ++r)
    {
        if (placed[r] > 0)
            continue;
        const Node rn = root.Child("network").Child("regions", static_cast<int>(r));
        const std::string what = "region \"" + region_names[r] + "\" has no workers";
        if (network.topology() == "relay")
        {
            Error(rn, "name",
                  what +
                      ": its relay would still receive every update over the uplink; place "
                      "a worker group in it (workers { region: \"" +
                      region_names[r] + "\" }) or remove the region");
        }
        else
        {
            Warn(rn, "name", what + "; its WAN link carries nothing");
        }
    }
}

void
Checker::WarnFlowQueue(const Node& n, const Link& link)
{
    if (!link.queue().empty() && link.queue() != "fifo")
    {
        Warn(n, "queue",
             "ignored by network.model \"flow\", which has no queues (no queueing delay, no "
             "drops, no AQM); use network.model \"packet\" to model \"" +
                 link.queue() + "\"");
    }
    if (link.has_queue_packets() && link.queue_packets() != 1000)
    {
        Warn(n, "queue_packets",
             "network.model \"flow\" has no queues: it only bounds the automatic TCP window "
             "(BDP + half the queue), never delays or drops packets");
    }
}

void
Checker::CheckCompressor(const Node& an, const Arm& arm, uint32_t rank, uint32_t d_model)
{
    std::vector<std::string> known;
    for (const hilo::CompressorInfo& info : hilo::ListCompressors())
        known.push_back(info.kind);
    if (!Choice(an, "compressor", arm.compressor(), known, "compressor"))
        return;
    // A small layout shaped like one adapted matrix of the workload: enough for the factory to
    // check the options with its strict reader. Budgets are checked at run time, on the real one.
    const int64_t r = rank > 0 ? rank : 8;
    const int64_t d = d_model > 0 ? d_model : 64;
    auto layout = hilo::AdapterLayout::Create({{"probe.lora_A", r, d}, {"probe.lora_B", d, r}});
    if (!layout.ok())
        return;
    // Keys in the order of the file (the map's reflection view keeps parse order).
    const FieldDescriptor* options_fd = arm.GetDescriptor()->FindFieldByName("options");
    const Reflection* refl = arm.GetReflection();
    std::vector<std::string> keys;
    for (int i = 0; i < refl->FieldSize(arm, options_fd); ++i)
    {
        const Message& e = refl->GetRepeatedMessage(arm, options_fd, i);
        keys.push_back(e.GetReflection()->GetString(e, e.GetDescriptor()->map_key()));
    }
    const hilo::CompressorOptions options(arm.options().begin(), arm.options().end());
    auto c = hilo::NewCompressor(arm.compressor(), *layout, options);
    if (c.ok())
        return;
    for (size_t i = 0; i < keys.size(); ++i)
    {
        if (c.status().message().find("'" + keys[i] + "'") != std::string::npos)
        {
            auto [line, column] = an.Location("options", static_cast<int>(i));
            Report(an.PathOf("options") + "." + keys[i], line, column, c.status().message());
            return;
        }
    }
    Error(an, keys.empty() ? "compressor" : "options", c.status().message());
}

void
Checker::CheckArms(const Node& root, const Scenario& s, const ResolvedWorkload& workload,
                   std::vector<ResolvedArm>* out)
{
    if (s.arms_size() == 0)
    {
        Error(root, "arms",
              "no arms: add at least one arms { name: \"...\" strategy: \"full|hilo|delta|primal\" "
              "}");
        return;
    }
    std::map<std::string, int> seen;
    for (int i = 0; i < s.arms_size(); ++i)
    {
        const Arm& arm = s.arms(i);
        const Node an = root.Child("arms", i);
        bool ok = Identifier(an, "name", -1, arm.name());
        if (ok && !seen.emplace(arm.name(), i).second)
        {
            const int first = seen[arm.name()];
            Error(an, "name",
                  "duplicate arm name \"" + arm.name() + "\" (first used by arms[" +
                      std::to_string(first) + "], line " +
                      std::to_string(root.Child("arms", first).line()) +
                      "); arm names must be unique");
            ok = false;
        }
        ok &= Choice(an, "strategy", arm.strategy(), kStrategies, "strategy");
        ok &= IntIn(an, "training_rank", arm.training_rank(), 0, 4096);
        const uint32_t rank = arm.training_rank() > 0 ? static_cast<uint32_t>(arm.training_rank())
                                                      : workload.lora_rank;
        const size_t before = m_diagnostics->items().size();
        CheckCompressor(an, arm, rank, workload.model.d_model);
        ok &= m_diagnostics->items().size() == before;
        const bool full = arm.strategy() == "full";
        if (full && arm.compressor() != "dense")
        {
            Error(an, "compressor",
                  "strategy \"full\" ships the parameters uncompressed; compressor must be "
                  "\"dense\" (options { key: \"dtype\" value: \"bf16\" } or fp32), got \"" +
                      arm.compressor() + "\"");
            ok = false;
        }
        auto budget = ParseBudget(arm.budget());
        if (!budget.ok())
        {
            Error(an, "budget", budget.status().message());
            ok = false;
        }
        else if (full && !budget->unlimited())
        {
            Error(an, "budget",
                  "strategy \"full\" always ships the whole adapter; budget must be empty (got \"" +
                      arm.budget() + "\")");
            ok = false;
        }
        const Node ef = an.Child("error_feedback");
        if (full && arm.error_feedback().enabled())
        {
            Error(ef, "enabled",
                  "strategy \"full\" has no error feedback; allowed: false (or leave it out)");
            ok = false;
        }
        ok &= DoubleIn(ef, "decay", arm.error_feedback().decay(), 0, true, 1, false);
        if (!ok)
            continue;
        ResolvedArm ra;
        ra.name = arm.name();
        ra.sync.kind = *hilo::ParseSyncKind(arm.strategy());
        ra.sync.compressor = arm.compressor();
        ra.sync.compressor_options =
            hilo::CompressorOptions(arm.options().begin(), arm.options().end());
        ra.sync.budget = *budget;
        ra.sync.error_feedback.enabled = arm.error_feedback().enabled();
        ra.sync.error_feedback.decay = static_cast<float>(arm.error_feedback().decay());
        ra.budget_text = arm.budget().empty() ? "unlimited" : arm.budget();
        if (!budget->unlimited() && arm.budget().back() != '%')
        {
            ra.budget_wire_bytes = static_cast<uint64_t>(budget->ResolveBytes(0)); // a size
        }
        ra.training_rank = rank;
        out->push_back(std::move(ra));
    }
}

} // namespace

void
ValidateScenario(const Scenario& scenario, const ScenarioCatalog& catalog, const SourceMap& source,
                 DiagnosticList* diagnostics, ResolvedScenario* resolved)
{
    Checker(source, catalog, diagnostics).Run(scenario, resolved);
}

} // namespace hilosim

#include "sim/run/output-writer.h"

#include "sim/run/arm-summary.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

namespace hilosim
{
namespace
{

std::string
JsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        switch (c)
        {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20)
                {
                    char buf[8];
                    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                    out += buf;
                }
                else
                {
                    out += c;
                }
        }
    }
    return out + "\"";
}

std::string
CsvField(const std::string& s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
    {
        return s;
    }
    std::string out = "\"";
    for (char c : s)
    {
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return out + "\"";
}

hilo::Status
WriteFile(const std::filesystem::path& path, const std::string& content)
{
    const std::filesystem::path tmp = path.string() + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f)
        {
            return hilo::Status::InvalidArgument("cannot write " + tmp.string());
        }
        f << content;
        if (!f.flush())
        {
            return hilo::Status::Internal("write to " + tmp.string() + " failed");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec)
    {
        return hilo::Status::Internal("cannot rename " + tmp.string() + ": " + ec.message());
    }
    return hilo::Status::Ok();
}

// The direction of a link with the highest mean utilisation (the first of equals); null if none.
const LinkUsage*
BusiestLink(const ArmResult& a)
{
    const LinkUsage* busiest = nullptr;
    for (const LinkUsage& u : a.links)
    {
        if (busiest == nullptr || u.mean_utilisation > busiest->mean_utilisation)
            busiest = &u;
    }
    return busiest;
}

// Rounds with a deadline, or members dropped anyway (a batch that made the gradient non-finite):
// members_dropped is written. Without either the files are as they were before it existed.
bool
ReportsDrops(const RunRecord& run, const std::vector<ArmResult>& arms)
{
    if (run.round_timeout_s > 0)
        return true;
    for (const ArmResult& a : arms)
    {
        for (const PublishEvent& p : a.publishes)
        {
            if (p.members_dropped > 0)
                return true;
        }
    }
    return false;
}

std::string
SummaryJson(const RunRecord& run, const std::vector<ArmResult>& arms)
{
    std::ostringstream o;
    o << "{\n  \"scenario\": " << JsonString(run.scenario_name) << ",\n";
    o << "  \"seed\": " << run.seed << ",\n";
    o << "  \"llm_profile\": " << JsonString(run.llm_profile) << ",\n";
    o << "  \"mode\": " << JsonString(run.mode) << ",\n";
    const models::HostInfo& h = run.host;
    o << "  \"host\": {\"cpu_model\": " << JsonString(h.cpu_model)
      << ", \"isa_path\": " << JsonString(h.isa_path)
      << ", \"blas_core\": " << JsonString(h.blas_core)
      << ", \"blas_config\": " << JsonString(h.blas_config)
      << ", \"openblas_coretype\": " << JsonString(h.openblas_coretype)
      << ", \"libtorch_version\": " << JsonString(h.libtorch_version) << "},\n";
    o << "  \"arms\": [";
    for (size_t i = 0; i < arms.size(); ++i)
    {
        const ArmResult& a = arms[i];
        const ArmSummary s = Summarize(a);
        o << (i ? ",\n" : "\n") << "    {\n";
        auto kv = [&](const char* k, const std::string& v, bool last = false)
        { o << "      \"" << k << "\": " << v << (last ? "\n" : ",\n"); };
        kv("name", JsonString(a.name));
        kv("strategy", JsonString(a.strategy));
        kv("compressor", JsonString(a.compressor));
        kv("compressor_params", JsonString(a.compressor_params));
        kv("training_rank", std::to_string(a.training_rank));
        kv("budget", JsonString(a.budget));
        kv("budget_fraction", FormatNumber(a.budget_fraction));
        kv("budget_transfer", JsonString(a.budget_transfer));
        // What the budget buys on each adapter (hilo/compress/budget-regime.h); null where the
        // compressor spends it on the other unit or has no budget.
        auto pair = [&](hilo::BudgetUnit unit)
        {
            if (a.purchase.unit != unit || a.budget_fraction == 0)
                return std::string("null");
            return "{\"modelled\": " + FormatNumber(a.purchase.modelled) +
                   ", \"learner\": " + FormatNumber(a.purchase.learner) + "}";
        };
        kv("directions_per_matrix", pair(hilo::BudgetUnit::kDirections));
        kv("entry_fraction", pair(hilo::BudgetUnit::kEntries));
        kv("adapter_bytes", std::to_string(a.adapter_bytes));
        kv("real_adapter_bytes", std::to_string(a.real_adapter_bytes));
        kv("wire_bytes_per_update_mean", FormatNumber(s.wire_bytes_per_update_mean));
        kv("real_bytes_per_update_mean", FormatNumber(s.real_bytes_per_update_mean));
        kv("fraction_of_adapter_bytes", FormatNumber(s.fraction_of_adapter_bytes));
        kv("update_latency_s", "{\"p50\": " + FormatNumber(s.latency_p50_s) +
                                   ", \"p99\": " + FormatNumber(s.latency_p99_s) +
                                   ", \"max\": " + FormatNumber(s.latency_max_s) + "}");
        kv("update_latency_net_s", "{\"p50\": " + FormatNumber(s.latency_net_p50_s) +
                                       ", \"p99\": " + FormatNumber(s.latency_net_p99_s) +
                                       ", \"max\": " + FormatNumber(s.latency_net_max_s) + "}");
        kv("step_time_s_mean", FormatNumber(s.step_time_s_mean));
        kv("sim_time_s", FormatNumber(a.sim_time_s));
        kv("final_quality", FormatNumber(s.final_quality));
        kv("quality_metric", JsonString(a.quality_metric));
        kv("higher_is_better", a.higher_is_better ? "true" : "false");
        kv("drift_rel_l2_max", FormatNumber(s.drift_rel_l2_max));
        kv("hash_mismatches", std::to_string(a.hash_mismatches));
        kv("resyncs", std::to_string(a.resyncs));
        if (ReportsDrops(run, arms))
            kv("members_dropped", std::to_string(s.members_dropped));
        kv("faults_injected", std::to_string(s.faults_injected));
        kv("versions_lost", std::to_string(s.versions_lost));
        kv("workers_alive", std::to_string(s.workers_alive));
        kv("workers_at_final_hash", std::to_string(a.workers_at_final_hash));
        kv("network_model", JsonString(a.network_model));
        kv("window_limited", a.window_limited_connections > 0 ? "true" : "false");
        kv("window_limited_connections", std::to_string(a.window_limited_connections));
        kv("recovery_s", "{\"p50\": " + FormatNumber(s.recovery_p50_s) +
                             ", \"max\": " + FormatNumber(s.recovery_max_s) + "}");
        kv("recovery_count", std::to_string(s.recoveries));
        kv("steps", std::to_string(s.steps));
        if (a.emulation)
        {
            const EmulationHealth& e = *a.emulation;
            kv("emulation_lag_s", "{\"mean\": " + FormatNumber(e.lag_mean_s) +
                                      ", \"p99\": " + FormatNumber(e.lag_p99_s) +
                                      ", \"max\": " + FormatNumber(e.lag_max_s) +
                                      ", \"samples\": " + std::to_string(e.lag_samples) + "}");
            kv("emulation_link_traffic_bps",
               "{\"capacity\": " + FormatNumber(e.peak_link_traffic_bps) +
                   ", \"carried_peak\": " + FormatNumber(e.carried_peak_bps) + "}");
            std::string warnings = "[";
            for (size_t w = 0; w < e.warnings.size(); ++w)
                warnings += (w ? ", " : "") + JsonString(e.warnings[w]);
            kv("emulation_warnings", warnings + "]");
        }
        if (!a.node_peak_rss.empty())
        {
            // Per node, the largest of its processes' peaks (a restarted node ran several).
            std::map<std::string, uint64_t> peak;
            std::vector<std::string> order;
            for (const NodePeakRss& n : a.node_peak_rss)
            {
                if (peak.count(n.node) == 0)
                    order.push_back(n.node);
                peak[n.node] = std::max(peak[n.node], n.kib);
            }
            std::string nodes = "{";
            for (size_t i = 0; i < order.size(); ++i)
                nodes += (i ? ", " : "") + JsonString(order[i]) + ": " +
                         FormatNumber(double(peak[order[i]]) / 1024.0);
            kv("node_peak_rss_mib", nodes + "}");
        }
        const LinkUsage* busiest = BusiestLink(a);
        kv("busiest_link",
           busiest == nullptr
               ? std::string("null")
               : "{\"link\": " + JsonString(busiest->link) +
                     ", \"direction\": " + JsonString(busiest->direction) +
                     ", \"bandwidth_bps\": " + std::to_string(busiest->bandwidth_bps) +
                     ", \"bytes\": " + std::to_string(busiest->bytes) +
                     ", \"mean_utilisation\": " + FormatNumber(busiest->mean_utilisation) +
                     ", \"peak_utilisation\": " + FormatNumber(busiest->peak_utilisation) + "}",
           /*last=*/true);
        o << "    }";
    }
    o << "\n  ]\n}\n";
    return o.str();
}

std::string
StepsCsv(const RunRecord& run, const std::vector<ArmResult>& arms)
{
    const bool drops = ReportsDrops(run, arms);
    // Real processes: how much longer the real computation took than the modelled GPU time, per
    // phase (0 in a simulation, where computation takes no simulated time: not written).
    bool real_time = false;
    for (const ArmResult& a : arms)
        real_time = real_time || a.real_time;
    std::ostringstream o;
    // quality_metric names what `quality` measures (summary.json's quality_metric of the arm:
    // reverse_kl, mean_reward, ...), on every row so that a filtered table still says.
    o << "arm,version,sim_time_s,grad_ready_s,loss,grad_norm,quality,quality_metric,"
         "payload_bytes,frame_bytes,"
         "wire_bytes,train_s,encode_s,transfer_s_max,apply_s_max,update_latency_max_s,"
         "drift_rel_l2,drift_max_abs,update_latency_net_s"
      << (real_time ? ",train_overrun_s,encode_overrun_s,rollout_overrun_s_max,"
                      "apply_overrun_s_max"
                    : "")
      << (drops ? ",members_dropped" : "") << "\n";
    for (const ArmResult& a : arms)
    {
        std::map<uint64_t, double> quality;
        for (const EvalEvent& e : a.evals)
        {
            quality[e.version] = e.quality;
        }
        std::map<uint64_t, double> transfer, apply, latency, net, apply_overrun, rollout_overrun;
        for (const RolloutEvent& r : a.rollouts)
        {
            rollout_overrun[r.round] = std::max(rollout_overrun[r.round], r.overrun_s);
        }
        for (const ApplyEvent& e : a.applies)
        {
            apply_overrun[e.version] = std::max(apply_overrun[e.version], e.overrun_s);
            if (!e.hash_ok || e.version < 1 || e.version > a.publishes.size())
                continue;
            const PublishEvent& p = a.publishes[e.version - 1];
            transfer[e.version] = std::max(transfer[e.version], e.received_s - p.published_s);
            apply[e.version] = std::max(apply[e.version], e.ready_s - e.received_s);
            latency[e.version] = std::max(latency[e.version], e.ready_s - p.grad_ready_s);
            net[e.version] =
                std::max(net[e.version], e.ready_s - p.grad_ready_s - ComputeOverrun(a, e));
        }
        if (quality.count(0))
        {
            o << CsvField(a.name) << ",0,0,,,," << FormatNumber(quality[0]) << ','
              << CsvField(a.quality_metric) << ",,,,,,,,,,," << (real_time ? ",,,," : "")
              << (drops ? "," : "") << "\n";
        }
        for (const PublishEvent& p : a.publishes)
        {
            o << CsvField(a.name) << ',' << p.version << ',' << FormatNumber(p.published_s) << ','
              << FormatNumber(p.grad_ready_s) << ',' << FormatNumber(p.loss) << ','
              << FormatNumber(p.grad_norm) << ','
              << (quality.count(p.version) ? FormatNumber(quality[p.version]) : "") << ','
              << CsvField(a.quality_metric) << ',' << p.payload_bytes << ',' << p.frame_bytes << ','
              << p.wire_bytes << ',' << FormatNumber(p.train_s) << ',' << FormatNumber(p.encode_s)
              << ',' << FormatNumber(transfer[p.version]) << ',' << FormatNumber(apply[p.version])
              << ',' << FormatNumber(latency[p.version]) << ',' << FormatNumber(p.drift_rel_l2)
              << ',' << FormatNumber(p.drift_max_abs) << ',' << FormatNumber(net[p.version]);
            if (real_time)
            {
                o << ',' << FormatNumber(p.train_overrun_s) << ','
                  << FormatNumber(p.encode_overrun_s) << ','
                  << FormatNumber(rollout_overrun[p.version]) << ','
                  << FormatNumber(apply_overrun[p.version]);
            }
            if (drops)
            {
                o << ',' << p.members_dropped;
            }
            o << '\n';
        }
    }
    return o.str();
}

std::string
WorkersCsv(const std::vector<ArmResult>& arms)
{
    bool pids = false;
    for (const ArmResult& a : arms)
        pids = pids || !a.worker_pid.empty();
    std::ostringstream o;
    o << "arm,version,worker,gpu,region,received_s,ready_s,latency_s,hash_ok,resync"
      << (pids ? ",pid" : "") << "\n";
    for (const ArmResult& a : arms)
    {
        for (const ApplyEvent& e : a.applies)
        {
            const double origin = e.version >= 1 && e.version <= a.publishes.size()
                                      ? a.publishes[e.version - 1].grad_ready_s
                                      : 0.0;
            o << CsvField(a.name) << ',' << e.version << ',' << e.worker << ','
              << CsvField(a.worker_gpu.at(e.worker)) << ','
              << CsvField(a.worker_region.at(e.worker)) << ',' << FormatNumber(e.received_s) << ','
              << FormatNumber(e.ready_s) << ',' << FormatNumber(e.ready_s - origin) << ','
              << (e.hash_ok ? 1 : 0) << ',' << (e.via_resync ? 1 : 0);
            if (pids)
            {
                o << ',' << (e.worker < a.worker_pid.size() ? a.worker_pid[e.worker] : 0);
            }
            o << '\n';
        }
    }
    return o.str();
}

std::string
RolloutsCsv(const std::vector<ArmResult>& arms)
{
    std::ostringstream o;
    o << "arm,round,worker,behaviour_version,started_s,done_s,real_bytes,wire_bytes\n";
    for (const ArmResult& a : arms)
    {
        for (const RolloutEvent& e : a.rollouts)
        {
            o << CsvField(a.name) << ',' << e.round << ',' << e.worker << ',' << e.behaviour_version
              << ',' << FormatNumber(e.started_s) << ',' << FormatNumber(e.done_s) << ','
              << e.real_bytes << ',' << e.wire_bytes << '\n';
        }
    }
    return o.str();
}

std::string
AllocationCsv(const std::vector<ArmResult>& arms)
{
    std::ostringstream o;
    o << "arm,version,matrix,matrix_name,kept\n";
    for (const ArmResult& a : arms)
    {
        for (const PublishEvent& p : a.publishes)
        {
            for (size_t m = 0; m < p.kept_per_matrix.size(); ++m)
            {
                const std::string name = m < a.matrix_names.size() ? a.matrix_names[m] : "";
                o << CsvField(a.name) << ',' << p.version << ',' << m << ',' << CsvField(name)
                  << ',' << p.kept_per_matrix[m] << '\n';
            }
        }
    }
    return o.str();
}

std::string
LinksCsv(const std::vector<ArmResult>& arms)
{
    std::ostringstream o;
    o << "arm,link,direction,bandwidth_bps,bytes,packets,mean_utilisation,peak_utilisation,"
         "peak_window_s\n";
    for (const ArmResult& a : arms)
    {
        for (const LinkUsage& u : a.links)
        {
            o << CsvField(a.name) << ',' << CsvField(u.link) << ',' << u.direction << ','
              << u.bandwidth_bps << ',' << u.bytes << ',' << u.packets << ','
              << FormatNumber(u.mean_utilisation) << ',' << FormatNumber(u.peak_utilisation) << ','
              << FormatNumber(u.window_s) << '\n';
        }
    }
    return o.str();
}

std::string
TcpTraceCsv(const std::vector<ArmResult>& arms)
{
    std::string o = TcpTraceHeader() + "\n";
    for (const ArmResult& a : arms)
    {
        for (const TcpTraceRow& row : a.tcp_trace)
            o += FormatTcpTraceRow(row) + "\n";
    }
    return o;
}

std::string
TimingJson(const std::vector<ArmResult>& arms)
{
    std::ostringstream o;
    o << "{\n  \"note\": \"real seconds of this process; not deterministic\",\n  \"arms\": [";
    for (size_t i = 0; i < arms.size(); ++i)
    {
        const ArmResult& a = arms[i];
        double grad = 0, enc = 0, rollout = 0, apply = 0, eval = 0;
        for (const PublishEvent& p : a.publishes)
        {
            grad += p.cpu_gradient_s;
            enc += p.cpu_encode_s;
        }
        for (const RolloutEvent& r : a.rollouts)
            rollout += r.cpu_s;
        for (const ApplyEvent& e : a.applies)
            apply += e.cpu_apply_s;
        for (const EvalEvent& e : a.evals)
            eval += e.cpu_s;
        o << (i ? ",\n" : "\n") << "    {\"name\": " << JsonString(a.name)
          << ", \"wall_s\": " << FormatNumber(a.wall_s) << ", \"wall_s_per_step\": "
          << FormatNumber(a.publishes.empty() ? 0 : a.wall_s / a.publishes.size())
          << (a.cpu_s > 0 ? ", \"cpu_s\": " + FormatNumber(a.cpu_s) : std::string())
          << ", \"gradient_s\": " << FormatNumber(grad) << ", \"publish_s\": " << FormatNumber(enc)
          << ", \"rollout_s\": " << FormatNumber(rollout)
          << ", \"replica_apply_s\": " << FormatNumber(apply)
          << ", \"eval_s\": " << FormatNumber(eval) << "}";
    }
    o << "\n  ]\n}\n";
    return o.str();
}

} // namespace

std::string
FormatNumber(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return buf;
}

hilo::Status
WriteRunOutputs(const std::string& dir, const RunRecord& run, const std::vector<ArmResult>& arms)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
    {
        return hilo::Status::InvalidArgument("cannot create output directory " + dir + ": " +
                                             ec.message());
    }
    const std::filesystem::path d(dir);
    HILO_RETURN_IF_ERROR(WriteFile(d / "resolved.textproto", run.resolved_text));
    HILO_RETURN_IF_ERROR(WriteFile(d / "steps.csv", StepsCsv(run, arms)));
    HILO_RETURN_IF_ERROR(WriteFile(d / "workers.csv", WorkersCsv(arms)));
    HILO_RETURN_IF_ERROR(WriteFile(d / "rollouts.csv", RolloutsCsv(arms)));
    HILO_RETURN_IF_ERROR(WriteFile(d / "allocation.csv", AllocationCsv(arms)));
    HILO_RETURN_IF_ERROR(WriteFile(d / "links.csv", LinksCsv(arms)));
    if (run.trace_tcp)
    {
        HILO_RETURN_IF_ERROR(WriteFile(d / "tcp-trace.csv", TcpTraceCsv(arms)));
    }
    else
    {
        // A trace of an earlier run into the same folder would pass for this one's.
        std::filesystem::remove(d / "tcp-trace.csv", ec);
    }
    HILO_RETURN_IF_ERROR(WriteFile(d / "summary.json", SummaryJson(run, arms)));
    HILO_RETURN_IF_ERROR(WriteFile(d / "timing.json", TimingJson(arms)));
    return hilo::Status::Ok();
}

void
PrintComparison(const std::vector<ArmResult>& arms, std::ostream& out)
{
    // %adapter: bytes per update against the adapter of the full-sync arm (the largest, when
    // several: "train low" is full sync at a lower rank), so that arms of different training
    // ranks compare on one scale; %own: against the arm's own adapter (summary.json's
    // fraction_of_adapter_bytes).
    const ArmResult* reference = nullptr;
    for (const ArmResult& a : arms)
    {
        const bool full = a.strategy == "full";
        const bool ref_full = reference != nullptr && reference->strategy == "full";
        if (reference == nullptr || (full && !ref_full) ||
            (full == ref_full && a.adapter_bytes > reference->adapter_bytes))
            reference = &a;
    }
    out << std::left << std::setw(16) << "arm" << std::setw(7) << "sync" << std::setw(10)
        << "compress" << std::right << std::setw(13) << "wire/update" << std::setw(10) << "%adapter"
        << std::setw(9) << "%own" << std::setw(11) << "lat p50 s" << std::setw(11) << "lat max s"
        << std::setw(10) << "step s" << std::setw(12) << "quality" << std::setw(9)
        << "hash!=" << std::setw(9) << "resyncs" << '\n';
    const ArmSummary* baseline = nullptr;
    std::vector<ArmSummary> sums;
    for (const ArmResult& a : arms)
        sums.push_back(Summarize(a));
    for (size_t i = 0; i < arms.size(); ++i)
    {
        const ArmResult& a = arms[i];
        const ArmSummary& s = sums[i];
        if (!baseline && a.strategy == "full")
            baseline = &s;
        std::ostringstream wire;
        const double mb = s.wire_bytes_per_update_mean / 1e6;
        wire << std::fixed << std::setprecision(mb < 10 ? 3 : 1) << mb << " MB";
        out << std::left << std::setw(16) << a.name.substr(0, 15) << std::setw(7) << a.strategy
            << std::setw(10) << a.compressor << std::right << std::setw(13) << wire.str()
            << std::setw(9) << std::fixed << std::setprecision(2)
            << (reference->adapter_bytes > 0
                    ? 100.0 * s.wire_bytes_per_update_mean / double(reference->adapter_bytes)
                    : 0.0)
            << '%' << std::setw(8) << 100.0 * s.fraction_of_adapter_bytes << '%' << std::setw(11)
            << std::setprecision(3) << s.latency_p50_s << std::setw(11) << s.latency_max_s
            << std::setw(10) << s.step_time_s_mean << std::setw(12) << std::setprecision(4)
            << s.final_quality << std::setw(9) << a.hash_mismatches << std::setw(9) << a.resyncs
            << '\n';
    }
    if (baseline)
    {
        for (size_t i = 0; i < arms.size(); ++i)
        {
            if (&sums[i] == baseline || sums[i].latency_p50_s <= 0)
                continue;
            out << "  " << arms[i].name << ": update latency p50 " << std::setprecision(1)
                << baseline->latency_p50_s / sums[i].latency_p50_s << "x faster than full sync, "
                << "step time " << baseline->step_time_s_mean / sums[i].step_time_s_mean << "x\n";
        }
    }
    for (const ArmResult& a : arms)
    {
        if (a.network_model == "flow")
        {
            out << "  " << a.name
                << ": link utilisation is measured in the packet model only (links.csv: zeros)\n";
        }
        else if (const LinkUsage* busiest = BusiestLink(a))
        {
            out << "  " << a.name << ": busiest link " << busiest->link << " ("
                << busiest->direction << ", " << std::setprecision(0)
                << busiest->bandwidth_bps / 1e6 << " Mbps): " << std::setprecision(1)
                << 100.0 * busiest->mean_utilisation << "% mean, "
                << 100.0 * busiest->peak_utilisation << "% peak over " << std::setprecision(1)
                << busiest->window_s << " s (links.csv)\n";
        }
    }
    if (reference != nullptr)
    {
        out << "%adapter = bytes per update / " << reference->name << "'s adapter ("
            << reference->adapter_bytes << " bytes); %own = / the arm's own adapter\n";
    }
    out << "quality = " << (arms.empty() ? "" : arms[0].quality_metric)
        << (arms.empty() || arms[0].higher_is_better ? " (higher is better)" : " (lower is better)")
        << '\n';
}

} // namespace hilosim

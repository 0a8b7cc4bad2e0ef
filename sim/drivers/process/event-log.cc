#include "sim/drivers/process/event-log.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace hilosim
{
namespace
{

std::string
Num(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    return buf;
}

template<typename... T>
std::string
Join(const T&... fields)
{
    std::ostringstream o;
    bool first = true;
    ((o << (first ? "" : " ") << fields, first = false), ...);
    return o.str();
}

} // namespace

hilo::StatusOr<std::unique_ptr<EventLogWriter>>
EventLogWriter::Open(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (!f)
    {
        return hilo::Status::InvalidArgument("cannot open event log " + path + " for appending");
    }
    return std::unique_ptr<EventLogWriter>(new EventLogWriter(f, path));
}

EventLogWriter::EventLogWriter(std::FILE* file, std::string path)
  : m_file(file)
  , m_path(std::move(path))
{
}

EventLogWriter::~EventLogWriter()
{
    std::fclose(m_file);
}

void
EventLogWriter::Line(const std::string& line)
{
    std::fputs(line.c_str(), m_file);
    std::fputc('\n', m_file);
    std::fflush(m_file);
}

hilo::StatusOr<bool>
EventLogWriter::Restored(const PublishEvent& e)
{
    std::fflush(m_file);
    EventRecord logged;
    HILO_RETURN_IF_ERROR(ReadEventLog(m_path, &logged));
    const auto same = [&e](const auto& event) { return event.version == e.version; };
    if (std::none_of(logged.publishes.begin(), logged.publishes.end(), same))
    {
        Publish(e);
    }
    return std::any_of(logged.evals.begin(), logged.evals.end(), same);
}

void
EventLogWriter::Process(const std::string& role, uint32_t index, int64_t pid)
{
    Line(Join("process", role, index, pid));
}

void
EventLogWriter::Publish(const PublishEvent& e)
{
    std::string kept;
    for (int64_t k : e.kept_per_matrix)
    {
        kept += (kept.empty() ? "" : ",") + std::to_string(k);
    }
    Line(Join("publish", e.version, Num(e.grad_ready_s), Num(e.published_s), Num(e.train_s),
              Num(e.encode_s), Num(e.loss), Num(e.grad_norm), e.payload_bytes, e.frame_bytes,
              e.wire_bytes, e.copies, Num(e.drift_rel_l2), Num(e.drift_max_abs),
              Num(e.train_overrun_s), Num(e.encode_overrun_s), Num(e.cpu_gradient_s),
              Num(e.cpu_encode_s), Num(e.cpu_apply_s), kept.empty() ? "-" : kept,
              e.members_dropped));
}

void
EventLogWriter::Eval(const EvalEvent& e)
{
    Line(Join("eval", e.version, Num(e.sim_time_s), Num(e.quality), Num(e.cpu_s)));
}

void
EventLogWriter::Rollout(const RolloutEvent& e)
{
    Line(Join("rollout", e.worker, e.round, e.behaviour_version, Num(e.started_s), Num(e.done_s),
              e.real_bytes, e.wire_bytes, Num(e.cpu_s), Num(e.overrun_s)));
}

void
EventLogWriter::Apply(const ApplyEvent& e)
{
    Line(Join("apply", e.worker, e.version, Num(e.received_s), Num(e.ready_s), e.hash_ok ? 1 : 0,
              e.via_resync ? 1 : 0, Num(e.cpu_apply_s), Num(e.overrun_s)));
}

void
EventLogWriter::Mismatch(uint32_t worker, uint64_t version)
{
    Line(Join("mismatch", worker, version));
}

void
EventLogWriter::Resync(uint32_t worker, uint64_t from_version)
{
    Line(Join("resync", worker, from_version));
}

void
EventLogWriter::CatchUp(const CatchUpEvent& e)
{
    Line(Join("catchup", e.worker, e.from_version, e.snapshot_version, e.to_version, Num(e.done_s),
              e.ok ? 1 : 0));
}

void
EventLogWriter::Done(uint32_t worker, uint64_t version, uint64_t state_hash, bool match)
{
    Line(Join("done", worker, version, state_hash, match ? 1 : 0));
}

hilo::Status
ReadEventLog(const std::string& path, EventRecord* record)
{
    std::ifstream in(path);
    if (!in)
    {
        return hilo::Status::InvalidArgument("cannot read event log " + path);
    }
    std::string line;
    int number = 0;
    while (std::getline(in, line))
    {
        ++number;
        if (in.eof())
        {
            break; // no newline: cut short by a killed process
        }
        std::istringstream f(line);
        std::string kind;
        f >> kind;
        bool ok = true;
        if (kind == "process")
        {
            std::string role;
            uint32_t index = 0;
            int64_t pid = 0;
            ok = static_cast<bool>(f >> role >> index >> pid);
            if (role == "worker")
                record->worker_pids[index].push_back(pid);
            else if (role == "learner")
                record->learner_pids.push_back(pid);
        }
        else if (kind == "publish")
        {
            PublishEvent e;
            std::string kept;
            ok = static_cast<bool>(f >> e.version >> e.grad_ready_s >> e.published_s >> e.train_s >>
                                   e.encode_s >> e.loss >> e.grad_norm >> e.payload_bytes >>
                                   e.frame_bytes >> e.wire_bytes >> e.copies >> e.drift_rel_l2 >>
                                   e.drift_max_abs >> e.train_overrun_s >> e.encode_overrun_s >>
                                   e.cpu_gradient_s >> e.cpu_encode_s >> e.cpu_apply_s >> kept >>
                                   e.members_dropped);
            if (ok && kept != "-")
            {
                std::istringstream k(kept);
                std::string item;
                while (std::getline(k, item, ','))
                    e.kept_per_matrix.push_back(std::stoll(item));
            }
            // A version published again supersedes the first: the learner restored an older
            // checkpoint (its latest torn, or never written) and trained that version anew.
            auto same = std::find_if(record->publishes.begin(), record->publishes.end(),
                                     [&](const PublishEvent& p) { return p.version == e.version; });
            if (same != record->publishes.end())
                *same = std::move(e);
            else
                record->publishes.push_back(std::move(e));
        }
        else if (kind == "eval")
        {
            EvalEvent e;
            ok = static_cast<bool>(f >> e.version >> e.sim_time_s >> e.quality >> e.cpu_s);
            auto same = std::find_if(record->evals.begin(), record->evals.end(),
                                     [&](const EvalEvent& v) { return v.version == e.version; });
            if (same != record->evals.end())
                *same = e;
            else
                record->evals.push_back(e);
        }
        else if (kind == "rollout")
        {
            RolloutEvent e;
            ok = static_cast<bool>(f >> e.worker >> e.round >> e.behaviour_version >> e.started_s >>
                                   e.done_s >> e.real_bytes >> e.wire_bytes >> e.cpu_s >>
                                   e.overrun_s);
            record->rollouts.push_back(e);
        }
        else if (kind == "apply")
        {
            ApplyEvent e;
            int hash_ok = 0, via = 0;
            ok = static_cast<bool>(f >> e.worker >> e.version >> e.received_s >> e.ready_s >>
                                   hash_ok >> via >> e.cpu_apply_s >> e.overrun_s);
            e.hash_ok = hash_ok != 0;
            e.via_resync = via != 0;
            record->applies.push_back(e);
        }
        else if (kind == "mismatch" || kind == "resync")
        {
            uint32_t worker = 0;
            uint64_t version = 0;
            ok = static_cast<bool>(f >> worker >> version);
            ++(kind == "mismatch" ? record->mismatches : record->resyncs);
        }
        else if (kind == "catchup")
        {
            CatchUpEvent e;
            int done_ok = 0;
            ok = static_cast<bool>(f >> e.worker >> e.from_version >> e.snapshot_version >>
                                   e.to_version >> e.done_s >> done_ok);
            e.ok = done_ok != 0;
            record->catch_ups.push_back(e);
        }
        else if (kind == "done")
        {
            uint32_t worker = 0;
            uint64_t version = 0, hash = 0;
            int match = 0;
            ok = static_cast<bool>(f >> worker >> version >> hash >> match);
            record->done[worker] = match != 0;
        }
        else
        {
            ok = false;
        }
        if (!ok)
        {
            return hilo::Status::Corruption(path + ":" + std::to_string(number) +
                                            ": malformed event line: " + line);
        }
    }
    return hilo::Status::Ok();
}

} // namespace hilosim

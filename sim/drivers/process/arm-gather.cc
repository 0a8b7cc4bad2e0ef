#include "sim/drivers/process/arm-gather.h"

#include "sim/drivers/process/event-log.h"
#include "sim/run/arm-context-builder.h"

#include <algorithm>

namespace hilosim
{

hilo::StatusOr<ArmResult>
GatherArm(const ResolvedScenario& sc, size_t arm_index, const std::string& dir, double wall_s,
          const std::vector<bool>& alive, std::vector<FaultRecord> faults)
{
    const ResolvedArm& arm = sc.arms[arm_index];
    auto context = BuildArmContext(sc, arm);
    if (!context.ok())
    {
        return context.status();
    }
    ArmResult result = NewArmResult(sc, arm, **context);
    EventRecord record;
    HILO_RETURN_IF_ERROR(ReadEventLog(dir + "/learner.events", &record));
    const uint32_t workers = (*context)->workers;
    for (uint32_t w = 0; w < workers; ++w)
    {
        HILO_RETURN_IF_ERROR(
            ReadEventLog(dir + "/worker-" + std::to_string(w) + ".events", &record));
    }
    std::sort(record.publishes.begin(), record.publishes.end(),
              [](const PublishEvent& a, const PublishEvent& b) { return a.version < b.version; });
    std::sort(record.evals.begin(), record.evals.end(),
              [](const EvalEvent& a, const EvalEvent& b) { return a.version < b.version; });
    std::stable_sort(record.applies.begin(), record.applies.end(),
                     [](const ApplyEvent& a, const ApplyEvent& b) {
                         return a.ready_s != b.ready_s ? a.ready_s < b.ready_s
                                                       : a.worker < b.worker;
                     });
    std::stable_sort(record.rollouts.begin(), record.rollouts.end(),
                     [](const RolloutEvent& a, const RolloutEvent& b)
                     { return a.done_s != b.done_s ? a.done_s < b.done_s : a.worker < b.worker; });
    result.publishes = std::move(record.publishes);
    result.evals = std::move(record.evals);
    result.applies = std::move(record.applies);
    result.rollouts = std::move(record.rollouts);
    result.hash_mismatches = record.mismatches;
    result.resyncs = record.resyncs;
    for (const ApplyEvent& e : result.applies)
    {
        if (e.version == sc.workload.steps)
            result.sim_time_s = std::max(result.sim_time_s, e.ready_s);
    }
    for (const auto& [worker, match] : record.done)
    {
        result.workers_at_final_hash += match ? 1 : 0;
    }
    std::stable_sort(record.catch_ups.begin(), record.catch_ups.end(),
                     [](const CatchUpEvent& a, const CatchUpEvent& b)
                     { return a.done_s != b.done_s ? a.done_s < b.done_s : a.worker < b.worker; });
    result.catch_ups = std::move(record.catch_ups);
    // Each worker's end: whether it runs, and the newest version it held with its hash checked.
    result.worker_end.assign(workers, WorkerEnd());
    for (uint32_t w = 0; w < workers; ++w)
    {
        result.worker_end[w].alive = w < alive.size() && alive[w];
    }
    for (const ApplyEvent& e : result.applies)
    {
        if (e.worker < workers && e.hash_ok)
            result.worker_end[e.worker].version =
                std::max(result.worker_end[e.worker].version, e.version);
    }
    for (FaultRecord& f : faults)
    {
        if (f.kind != "replay_divergence" || !f.injected || f.end_s >= 0)
            continue;
        for (const ApplyEvent& e : result.applies) // in time order: the first failed check
        {
            if (e.worker == f.workers.front() && !e.hash_ok && e.ready_s >= f.start_s)
            {
                f.end_s = e.ready_s;
                break;
            }
        }
    }
    result.faults = std::move(faults);
    result.real_time = true;
    result.worker_pid.assign(workers, 0);
    for (const auto& [worker, pids] : record.worker_pids)
    {
        if (worker < workers && !pids.empty())
            result.worker_pid[worker] = pids.back();
    }
    result.wall_s = wall_s;
    if (result.publishes.size() != sc.workload.steps)
    {
        return hilo::Status::Internal("the learner's event log has " +
                                      std::to_string(result.publishes.size()) + " of " +
                                      std::to_string(sc.workload.steps) + " versions");
    }
    return result;
}

} // namespace hilosim

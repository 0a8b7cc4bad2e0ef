// EventLog: how a node process records what its role reported, for hilo-emu to gather into the
// same outputs as a simulation (sim/run/output-writer.h). One text line per event, written and
// flushed as it happens, so a process killed mid-run leaves every event it reported; a restarted
// process appends to the same file. Numbers are printed exactly (%.17g round-trips a double).
//
//   process ROLE INDEX PID                    (at start: learner|worker|relay)
//   publish VERSION GRAD_READY PUBLISHED TRAIN_S ENCODE_S LOSS GRAD_NORM PAYLOAD FRAME WIRE COPIES
//           DRIFT_L2 DRIFT_MAX TRAIN_OVERRUN ENCODE_OVERRUN CPU_GRAD CPU_ENCODE CPU_APPLY KEPT
//   eval VERSION TIME QUALITY CPU_S
//   rollout WORKER ROUND BEHAVIOUR STARTED DONE REAL_BYTES WIRE_BYTES CPU_S OVERRUN
//   apply WORKER VERSION RECEIVED READY HASH_OK VIA_RESYNC CPU_S OVERRUN
//   mismatch WORKER VERSION
//   resync WORKER FROM_VERSION
//   catchup WORKER FROM_VERSION SNAPSHOT_VERSION TO_VERSION DONE OK   (SNAPSHOT -1: none)
//   done WORKER VERSION STATE_HASH MATCH      (learner: a worker announced the last version)
// KEPT is a comma-separated list, or "-" when empty.
#ifndef HILOSIM_DRIVERS_PROCESS_EVENT_LOG_H
#define HILOSIM_DRIVERS_PROCESS_EVENT_LOG_H

#include "sim/roles/role-events.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

class EventLogWriter
{
  public:
    /// Opens `path` for appending (created when missing).
    static hilo::StatusOr<std::unique_ptr<EventLogWriter>> Open(const std::string& path);
    ~EventLogWriter();

    void Process(const std::string& role, uint32_t index, int64_t pid);
    void Publish(const PublishEvent& e);
    void Eval(const EvalEvent& e);
    void Rollout(const RolloutEvent& e);
    void Apply(const ApplyEvent& e);
    void Mismatch(uint32_t worker, uint64_t version);
    void Resync(uint32_t worker, uint64_t from_version);
    void CatchUp(const CatchUpEvent& e);
    void Done(uint32_t worker, uint64_t version, uint64_t state_hash, bool match);
    /// A learner restored from its checkpoint reports the publish of the version it holds (`e`):
    /// written unless the log already has a publish line of that version, so that a learner killed
    /// between writing its checkpoint and logging the publish leaves every version it holds
    /// logged once. Returns whether the log has an eval line of that version (the caller
    /// evaluates again when one is due and missing); Corruption when the log cannot be read.
    hilo::StatusOr<bool> Restored(const PublishEvent& e);

  private:
    EventLogWriter(std::FILE* file, std::string path);
    void Line(const std::string& line);
    std::FILE* m_file;
    std::string m_path;
};

/// Everything read back from one or more event logs.
struct EventRecord
{
    std::vector<PublishEvent> publishes;
    std::vector<EvalEvent> evals;
    std::vector<RolloutEvent> rollouts;
    std::vector<ApplyEvent> applies;
    std::vector<CatchUpEvent> catch_ups;
    uint64_t mismatches{0};
    uint64_t resyncs{0};
    std::map<uint32_t, bool> done;                        // worker -> its final hash matched
    std::map<uint32_t, std::vector<int64_t>> worker_pids; // every process that ran a worker
    std::vector<int64_t> learner_pids;
};

/// Appends the events of the log at `path` to `record`. Corruption naming the file and line for
/// a malformed line (a process killed mid-write may leave a last line cut short: that one is
/// skipped, not an error).
hilo::Status ReadEventLog(const std::string& path, EventRecord* record);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_EVENT_LOG_H

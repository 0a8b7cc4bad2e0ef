#include "sim/drivers/process/arm-frame-limit.h"

#include <algorithm>

namespace hilosim
{

hilo::StatusOr<uint64_t>
ArmFrameLimit(const ArmContext& context, const hilo::PublisherOptions& options)
{
    auto publisher = hilo::Publisher::Create(context.sync, context.workload->layout(),
                                             context.optimizer, context.initial, options);
    if (!publisher.ok())
    {
        return publisher.status();
    }
    auto snapshot = (*publisher)->LatestSnapshotFrame();
    if (!snapshot.ok())
    {
        return snapshot.status();
    }
    const uint64_t snapshot_bytes = snapshot->size();
    const uint64_t update_bytes = 2 * snapshot_bytes;
    const uint64_t ceiling = (1ull << 31) - 1;
    const uint64_t ring = options.ring_capacity;
    // Past the ceiling no arithmetic is needed (and none may overflow).
    if (update_bytes > ceiling / (ring + 1))
    {
        return ceiling;
    }
    return std::min(ceiling, snapshot_bytes + ring * update_bytes + kFrameLimitSlackBytes);
}

} // namespace hilosim

// ArmFrameLimit: the largest message payload a node of an arm accepts from a peer, derived from
// the arm rather than fixed: a frame claiming more is corrupt and closes its connection, so a
// hostile peer cannot make a node reserve more memory than the arm's own traffic needs.
//
// The largest message of an arm is a catch-up: the latest snapshot plus a full ring of updates.
// A snapshot's size is measured (a Publisher of the arm at version 0 has one); an update is
// bounded by twice a snapshot (a sparse update at a full budget carries an index with every
// value, and a snapshot holds at least the adapter's values). Trajectory batches, welcomes and
// the rest travel within the slack.
#ifndef HILOSIM_DRIVERS_PROCESS_ARM_FRAME_LIMIT_H
#define HILOSIM_DRIVERS_PROCESS_ARM_FRAME_LIMIT_H

#include "sim/roles/arm-context.h"

#include "hilo/core/status.h"
#include "hilo/sync/publisher.h"

#include <cstdint>

namespace hilosim
{

/// Room for everything that is not an update or a snapshot, and for the framing around them.
constexpr uint64_t kFrameLimitSlackBytes = 16ull << 20;

/// The payload limit for the arm's messages (at most 2^31 - 1, the transport's ceiling); an
/// error when no publisher can be built for the arm.
hilo::StatusOr<uint64_t> ArmFrameLimit(const ArmContext& context,
                                       const hilo::PublisherOptions& options);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_ARM_FRAME_LIMIT_H

// A PublishEvent as bytes, for the learner's checkpoint: a learner restored from its checkpoint
// reports the publish the checkpoint was written with, so that a driver whose log lost it (the
// learner stopped between writing the checkpoint and logging the publish) can record it then.
// Little-endian (hilo/core/coding.h); doubles as their IEEE-754 bits, so the event read back is
// the one written, bit for bit.
//   u64 version, 8 x f64 (grad_ready, published, train, encode, loss, grad_norm, drift_l2,
//   drift_max), i64 payload, i64 frame, u64 wire, u64 copies, u64 state_hash,
//   5 x f64 (train_overrun, encode_overrun, cpu_gradient, cpu_encode, cpu_apply),
//   u32 n, n x i64 kept_per_matrix
#ifndef HILOSIM_ROLES_PUBLISH_RECORD_H
#define HILOSIM_ROLES_PUBLISH_RECORD_H

#include "sim/roles/role-events.h"

#include "hilo/core/coding.h"
#include "hilo/core/status.h"

namespace hilosim
{

/// Appends `e` to `w`.
void PutPublishEvent(hilo::ByteWriter* w, const PublishEvent& e);
/// Reads one event written by PutPublishEvent; Corruption when `r` ends first or the count of
/// kept entries exceeds what is left.
hilo::Status GetPublishEvent(hilo::ByteReader* r, PublishEvent* e);

} // namespace hilosim

#endif // HILOSIM_ROLES_PUBLISH_RECORD_H

#include "sim/roles/publish-record.h"

namespace hilosim
{
void
PutPublishEvent(hilo::ByteWriter* w, const PublishEvent& e)
{
    w->PutU64(e.version);
    for (double v : {e.grad_ready_s, e.published_s, e.train_s, e.encode_s, e.loss, e.grad_norm,
                     e.drift_rel_l2, e.drift_max_abs})
    {
        w->PutF64(v);
    }
    w->PutU64(static_cast<uint64_t>(e.payload_bytes));
    w->PutU64(static_cast<uint64_t>(e.frame_bytes));
    w->PutU64(e.wire_bytes);
    w->PutU64(e.copies);
    w->PutU64(e.state_hash);
    for (double v :
         {e.train_overrun_s, e.encode_overrun_s, e.cpu_gradient_s, e.cpu_encode_s, e.cpu_apply_s})
    {
        w->PutF64(v);
    }
    w->PutU32(static_cast<uint32_t>(e.kept_per_matrix.size()));
    for (int64_t kept : e.kept_per_matrix)
    {
        w->PutU64(static_cast<uint64_t>(kept));
    }
}

hilo::Status
GetPublishEvent(hilo::ByteReader* r, PublishEvent* e)
{
    const hilo::Status truncated = hilo::Status::Corruption("publish record truncated");
    if (!r->GetU64(&e->version))
    {
        return truncated;
    }
    for (double* v : {&e->grad_ready_s, &e->published_s, &e->train_s, &e->encode_s, &e->loss,
                      &e->grad_norm, &e->drift_rel_l2, &e->drift_max_abs})
    {
        if (!r->GetF64(v))
        {
            return truncated;
        }
    }
    uint64_t payload = 0;
    uint64_t frame = 0;
    if (!r->GetU64(&payload) || !r->GetU64(&frame) || !r->GetU64(&e->wire_bytes) ||
        !r->GetU64(&e->copies) || !r->GetU64(&e->state_hash))
    {
        return truncated;
    }
    e->payload_bytes = static_cast<int64_t>(payload);
    e->frame_bytes = static_cast<int64_t>(frame);
    for (double* v : {&e->train_overrun_s, &e->encode_overrun_s, &e->cpu_gradient_s,
                      &e->cpu_encode_s, &e->cpu_apply_s})
    {
        if (!r->GetF64(v))
        {
            return truncated;
        }
    }
    uint32_t n = 0;
    if (!r->GetU32(&n) || n > r->remaining() / 8)
    {
        return hilo::Status::Corruption("publish record: " + std::to_string(n) +
                                        " kept entries, more than the record holds");
    }
    e->kept_per_matrix.assign(n, 0);
    for (int64_t& kept : e->kept_per_matrix)
    {
        uint64_t bits = 0;
        r->GetU64(&bits); // the length was checked above
        kept = static_cast<int64_t>(bits);
    }
    return hilo::Status::Ok();
}

} // namespace hilosim

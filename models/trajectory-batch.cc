#include "models/trajectory-batch.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

#include <cmath>

namespace models
{
namespace
{

constexpr uint32_t kMagic = 0x4a525448; // "HTRJ" read little-endian
constexpr uint8_t kFormat = 1;
// Fixed-size header: magic, format, kind, step, worker, 5 x u32.
constexpr size_t kHeaderBytes = 4 + 1 + 1 + 8 + 4 + 5 * 4;

} // namespace

hilo::Status
TrajectoryBatch::Validate() const
{
    if (kind != WorkloadKind::kDistill && kind != WorkloadKind::kGrpo)
    {
        return hilo::Status::InvalidArgument("unknown workload kind");
    }
    if (sequences == 0 || prompt_len == 0 || gen_len == 0 || group_size == 0 || vocab < 2 ||
        vocab > 65536 || sequences % group_size != 0)
    {
        return hilo::Status::InvalidArgument(
            "bad batch shape: sequences=" + std::to_string(sequences) +
            " prompt_len=" + std::to_string(prompt_len) + " gen_len=" + std::to_string(gen_len) +
            " group_size=" + std::to_string(group_size) + " vocab=" + std::to_string(vocab));
    }
    const size_t n = sequences;
    if (tokens.size() != n * (prompt_len + gen_len) || behaviour_logp.size() != n * gen_len ||
        rewards.size() != n)
    {
        return hilo::Status::InvalidArgument("batch array sizes do not match its shape");
    }
    for (int32_t t : tokens)
    {
        if (t < 0 || static_cast<uint32_t>(t) >= vocab)
        {
            return hilo::Status::InvalidArgument("token " + std::to_string(t) + " outside vocab " +
                                                 std::to_string(vocab));
        }
    }
    for (float lp : behaviour_logp)
    {
        if (!std::isfinite(lp) || lp > 0.0f)
        {
            return hilo::Status::InvalidArgument("behaviour log-prob not finite or > 0");
        }
    }
    for (float r : rewards)
    {
        if (!std::isfinite(r))
        {
            return hilo::Status::InvalidArgument("reward not finite");
        }
    }
    return hilo::Status::Ok();
}

std::string
TrajectoryBatch::Serialize() const
{
    std::string out;
    out.reserve(kHeaderBytes + tokens.size() * 2 + (behaviour_logp.size() + rewards.size()) * 4 +
                4);
    hilo::ByteWriter w(&out);
    w.PutU32(kMagic);
    w.PutU8(kFormat);
    w.PutU8(static_cast<uint8_t>(kind));
    w.PutU64(step);
    w.PutU32(worker);
    w.PutU32(sequences);
    w.PutU32(prompt_len);
    w.PutU32(gen_len);
    w.PutU32(group_size);
    w.PutU32(vocab);
    for (int32_t t : tokens)
    {
        w.PutU16(static_cast<uint16_t>(t));
    }
    for (float lp : behaviour_logp)
    {
        w.PutF32(lp);
    }
    for (float r : rewards)
    {
        w.PutF32(r);
    }
    w.PutU32(hilo::Crc32c(out.data(), out.size()));
    return out;
}

hilo::StatusOr<TrajectoryBatch>
TrajectoryBatch::Parse(std::string_view bytes)
{
    if (bytes.size() < kHeaderBytes + 4)
    {
        return hilo::Status::Corruption("trajectory batch truncated (" +
                                        std::to_string(bytes.size()) + " bytes)");
    }
    const std::string_view body = bytes.substr(0, bytes.size() - 4);
    hilo::ByteReader crc_reader(bytes.substr(bytes.size() - 4));
    uint32_t crc = 0;
    crc_reader.GetU32(&crc);
    if (crc != hilo::Crc32c(body.data(), body.size()))
    {
        return hilo::Status::Corruption("trajectory batch CRC mismatch");
    }
    hilo::ByteReader r(body);
    uint32_t magic = 0;
    uint8_t format = 0;
    uint8_t kind = 0;
    TrajectoryBatch b;
    r.GetU32(&magic);
    r.GetU8(&format);
    r.GetU8(&kind);
    if (magic != kMagic)
    {
        return hilo::Status::Corruption("not a trajectory batch (bad magic)");
    }
    if (format != kFormat)
    {
        return hilo::Status::Corruption("unknown trajectory format " + std::to_string(format));
    }
    b.kind = static_cast<WorkloadKind>(kind);
    r.GetU64(&b.step);
    r.GetU32(&b.worker);
    r.GetU32(&b.sequences);
    r.GetU32(&b.prompt_len);
    r.GetU32(&b.gen_len);
    r.GetU32(&b.group_size);
    r.GetU32(&b.vocab);
    // Check the declared sizes against the bytes before allocating anything.
    const uint64_t n = b.sequences;
    const uint64_t ntok = n * (uint64_t(b.prompt_len) + b.gen_len);
    const uint64_t nlp = n * b.gen_len;
    if (b.prompt_len > (1u << 20) || b.gen_len > (1u << 20) ||
        r.remaining() != ntok * 2 + nlp * 4 + n * 4)
    {
        return hilo::Status::Corruption("trajectory batch length does not match its header");
    }
    b.tokens.resize(ntok);
    for (uint64_t i = 0; i < ntok; ++i)
    {
        uint16_t t = 0;
        r.GetU16(&t);
        b.tokens[i] = t;
    }
    b.behaviour_logp.resize(nlp);
    r.GetFloats(b.behaviour_logp.data(), nlp, hilo::ValueDtype::kFp32);
    b.rewards.resize(n);
    r.GetFloats(b.rewards.data(), n, hilo::ValueDtype::kFp32);
    hilo::Status st = b.Validate();
    if (!st.ok())
    {
        return hilo::Status::Corruption("trajectory batch: " + st.message());
    }
    return b;
}

} // namespace models

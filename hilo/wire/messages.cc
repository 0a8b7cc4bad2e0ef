#include "hilo/wire/messages.h"

#include "hilo/core/coding.h"
#include "hilo/core/finite.h"
#include "hilo/core/hash.h"
#include "hilo/core/value-dtype.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstring>
#include <limits>

namespace hilo
{
namespace
{

// Protobuf's own limit is INT_MAX bytes per message; ours must not be above it, or a frame could
// be accepted that ParseFromArray (which takes an int) cannot read.
static_assert(kMaxFrameBody <= static_cast<uint64_t>(std::numeric_limits<int>::max()),
              "frame bodies must fit Protobuf's int-sized parse");

uint64_t
EffectiveLimit(uint64_t max_body)
{
    return max_body < kMaxFrameBody ? max_body : kMaxFrameBody;
}

// Deterministic serialization, checked: the size is known before a byte is written, so an
// oversized message is refused without building it, and a failed or short write is an error
// rather than an empty body.
StatusOr<std::string>
SerializeDeterministic(const google::protobuf::MessageLite& message, const char* what,
                       uint64_t max_body)
{
    const uint64_t limit = EffectiveLimit(max_body);
    const size_t size = message.ByteSizeLong();
    if (size > limit)
    {
        return Status::InvalidArgument(std::string(what) + " body of " + std::to_string(size) +
                                       " bytes exceeds the frame limit of " +
                                       std::to_string(limit) + " bytes");
    }
    std::string body;
    bool written = false;
    bool had_error = false;
    {
        google::protobuf::io::StringOutputStream raw(&body);
        google::protobuf::io::CodedOutputStream coded(&raw);
        coded.SetSerializationDeterministic(true);
        written = message.SerializeToCodedStream(&coded);
        coded.Trim();
        had_error = coded.HadError();
    }
    if (!written || had_error || body.size() != size)
    {
        return Status::Internal(std::string(what) +
                                " failed to serialize: " + std::to_string(body.size()) + " of " +
                                std::to_string(size) + " bytes written");
    }
    return body;
}

std::string
FloatsToBytes(const std::vector<float>& v)
{
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

Status
BytesToFloats(const std::string& bytes, int64_t numel, bool may_be_empty, const char* field,
              std::vector<float>* out)
{
    const size_t n = static_cast<size_t>(numel);
    if (bytes.empty() && may_be_empty)
    {
        out->clear();
        return Status::Ok();
    }
    if (bytes.size() != n * sizeof(float))
    {
        return Status::Corruption(std::string("snapshot field '") + field + "' holds " +
                                  std::to_string(bytes.size()) + " bytes; expected " +
                                  std::to_string(n * sizeof(float)) +
                                  (may_be_empty ? " or none" : ""));
    }
    out->resize(n);
    if (n > 0) // an empty vector's data() may be null, which memcpy forbids even for 0 bytes
    {
        std::memcpy(out->data(), bytes.data(), bytes.size());
    }
    if (!AllFiniteParallel(out->data(), numel))
    {
        return Status::Corruption(std::string("snapshot field '") + field +
                                  "' holds a NaN or infinite value");
    }
    return Status::Ok();
}

} // namespace

StatusOr<std::string>
EncodeUpdateFrame(const wire::Update& update, uint64_t max_body)
{
    StatusOr<std::string> body = SerializeDeterministic(update, "Update", max_body);
    if (!body.ok())
    {
        return body.status();
    }
    return EncodeFrame(FrameKind::kUpdate, *body, max_body);
}

StatusOr<wire::Update>
DecodeUpdateFrame(std::string_view frame, uint64_t max_body)
{
    StatusOr<FrameView> view = DecodeFrame(frame, max_body);
    if (!view.ok())
    {
        return view.status();
    }
    if (view->kind != FrameKind::kUpdate)
    {
        return Status::Corruption("expected an Update frame, got a Snapshot frame");
    }
    wire::Update update;
    if (!update.ParseFromArray(view->body.data(), static_cast<int>(view->body.size())))
    {
        return Status::Corruption("Update body does not parse");
    }
    if (update.format_version() != kFormatVersion)
    {
        return Status::NotSupported("Update format version " +
                                    std::to_string(update.format_version()) +
                                    "; this build reads " + std::to_string(kFormatVersion));
    }
    if (update.version() != update.base_version() + 1)
    {
        return Status::Corruption("Update version " + std::to_string(update.version()) +
                                  " does not follow its base version " +
                                  std::to_string(update.base_version()));
    }
    return update;
}

uint64_t
SnapshotBodyBytesBound(uint64_t theta_values, uint64_t m_values, uint64_t v_values)
{
    // Protobuf sizes the fixed part: every scalar at its widest value, the bytes fields empty.
    constexpr uint64_t kAllOnes = std::numeric_limits<uint64_t>::max();
    wire::Snapshot widest;
    widest.set_format_version(kFormatVersion);
    widest.set_version(kAllOnes);
    widest.set_config_hash(kAllOnes);
    widest.set_step(kAllOnes);
    widest.set_beta1_prod(std::numeric_limits<uint32_t>::max());
    widest.set_beta2_prod(std::numeric_limits<uint32_t>::max());
    widest.set_state_hash(kAllOnes);
    uint64_t bytes = widest.ByteSizeLong();
    for (uint64_t values : {theta_values, m_values, v_values})
    {
        // A non-empty bytes field: one tag byte (fields 4..6), the varint length, the data.
        // Saturates rather than wrapping for absurd counts.
        if (values == 0)
        {
            continue;
        }
        if (values > kAllOnes / 8)
        {
            return kAllOnes;
        }
        const uint64_t length = values * sizeof(float);
        bytes += 1 + static_cast<uint64_t>(VarintLength(length)) + length;
    }
    return bytes;
}

StatusOr<std::string>
EncodeSnapshotFrame(const ReplicatedState& state, uint64_t config_hash, uint64_t max_body)
{
    const uint64_t limit = EffectiveLimit(max_body);
    const uint64_t bound = SnapshotBodyBytesBound(
        state.adapter.theta.size(), state.optimizer.m.size(), state.optimizer.v.size());
    if (bound > limit)
    {
        return Status::InvalidArgument(
            "a snapshot of " + std::to_string(state.adapter.theta.size()) + " parameters" +
            (state.optimizer.m.empty() ? std::string() : " with optimizer moments") +
            " needs up to " + std::to_string(bound) + " bytes; one frame holds at most " +
            std::to_string(limit) + " bytes");
    }
    wire::Snapshot s;
    s.set_format_version(kFormatVersion);
    s.set_version(state.adapter.version);
    s.set_config_hash(config_hash);
    s.set_theta(FloatsToBytes(state.adapter.theta));
    s.set_m(FloatsToBytes(state.optimizer.m));
    s.set_v(FloatsToBytes(state.optimizer.v));
    s.set_step(state.optimizer.step);
    s.set_beta1_prod(FloatBits(state.optimizer.beta1_prod));
    s.set_beta2_prod(FloatBits(state.optimizer.beta2_prod));
    s.set_state_hash(state.adapter.Hash());
    StatusOr<std::string> body = SerializeDeterministic(s, "Snapshot", max_body);
    if (!body.ok())
    {
        return body.status();
    }
    return EncodeFrame(FrameKind::kSnapshot, *body, max_body);
}

StatusOr<DecodedSnapshot>
DecodeSnapshotFrame(std::string_view frame, int64_t numel, uint64_t max_body)
{
    StatusOr<FrameView> view = DecodeFrame(frame, max_body);
    if (!view.ok())
    {
        return view.status();
    }
    if (view->kind != FrameKind::kSnapshot)
    {
        return Status::Corruption("expected a Snapshot frame, got an Update frame");
    }
    wire::Snapshot s;
    if (!s.ParseFromArray(view->body.data(), static_cast<int>(view->body.size())))
    {
        return Status::Corruption("Snapshot body does not parse");
    }
    if (s.format_version() != kFormatVersion)
    {
        return Status::NotSupported("Snapshot format version " +
                                    std::to_string(s.format_version()) + "; this build reads " +
                                    std::to_string(kFormatVersion));
    }
    DecodedSnapshot out;
    HILO_RETURN_IF_ERROR(BytesToFloats(s.theta(), numel, false, "theta", &out.state.adapter.theta));
    HILO_RETURN_IF_ERROR(BytesToFloats(s.m(), numel, true, "m", &out.state.optimizer.m));
    HILO_RETURN_IF_ERROR(BytesToFloats(s.v(), numel, true, "v", &out.state.optimizer.v));
    out.state.adapter.version = s.version();
    out.state.optimizer.step = s.step();
    out.state.optimizer.beta1_prod = BitsToFloat(s.beta1_prod());
    out.state.optimizer.beta2_prod = BitsToFloat(s.beta2_prod());
    out.config_hash = s.config_hash();
    if (out.state.adapter.Hash() != s.state_hash())
    {
        return Status::HashMismatch("snapshot parameters do not match their state hash");
    }
    return out;
}

} // namespace hilo

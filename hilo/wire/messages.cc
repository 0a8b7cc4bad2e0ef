#include "hilo/wire/messages.h"

#include "hilo/core/hash.h"
#include "hilo/core/value-dtype.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstring>

namespace hilo
{
namespace
{

std::string
SerializeDeterministic(const google::protobuf::MessageLite& message)
{
    std::string body;
    {
        google::protobuf::io::StringOutputStream raw(&body);
        google::protobuf::io::CodedOutputStream coded(&raw);
        coded.SetSerializationDeterministic(true);
        message.SerializeToCodedStream(&coded);
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
    std::memcpy(out->data(), bytes.data(), bytes.size());
    return Status::Ok();
}

} // namespace

std::string
EncodeUpdateFrame(const wire::Update& update)
{
    return EncodeFrame(FrameKind::kUpdate, SerializeDeterministic(update));
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

std::string
EncodeSnapshotFrame(const ReplicatedState& state, uint64_t config_hash)
{
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
    return EncodeFrame(FrameKind::kSnapshot, SerializeDeterministic(s));
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

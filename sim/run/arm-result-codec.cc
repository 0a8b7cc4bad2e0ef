#include "sim/run/arm-result-codec.h"

#include "hilo/core/coding.h"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace hilosim
{
namespace
{

constexpr std::string_view kMagic = "HILOARM1";

template<typename T>
struct IsVector : std::false_type
{
};

template<typename T>
struct IsVector<std::vector<T>> : std::true_type
{
};

template<typename T>
struct IsOptional : std::false_type
{
};

template<typename T>
struct IsOptional<std::optional<T>> : std::true_type
{
};

// The fields of each record, listed once for both directions: Visit(f, record) calls
// f(name, field) in declaration order.
template<typename T>
struct Fields;

template<>
struct Fields<PublishEvent>
{
    static constexpr const char* kName = "publishes";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("version", e.version);
        f("grad_ready_s", e.grad_ready_s);
        f("published_s", e.published_s);
        f("train_s", e.train_s);
        f("encode_s", e.encode_s);
        f("loss", e.loss);
        f("grad_norm", e.grad_norm);
        f("payload_bytes", e.payload_bytes);
        f("frame_bytes", e.frame_bytes);
        f("wire_bytes", e.wire_bytes);
        f("copies", e.copies);
        f("state_hash", e.state_hash);
        f("drift_rel_l2", e.drift_rel_l2);
        f("drift_max_abs", e.drift_max_abs);
        f("kept_per_matrix", e.kept_per_matrix);
        f("members_dropped", e.members_dropped);
        f("train_overrun_s", e.train_overrun_s);
        f("encode_overrun_s", e.encode_overrun_s);
        f("cpu_gradient_s", e.cpu_gradient_s);
        f("cpu_encode_s", e.cpu_encode_s);
        f("cpu_apply_s", e.cpu_apply_s);
    }
};

template<>
struct Fields<EvalEvent>
{
    static constexpr const char* kName = "evals";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("version", e.version);
        f("sim_time_s", e.sim_time_s);
        f("quality", e.quality);
        f("cpu_s", e.cpu_s);
    }
};

template<>
struct Fields<ApplyEvent>
{
    static constexpr const char* kName = "applies";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("worker", e.worker);
        f("version", e.version);
        f("received_s", e.received_s);
        f("ready_s", e.ready_s);
        f("hash_ok", e.hash_ok);
        f("via_resync", e.via_resync);
        f("overrun_s", e.overrun_s);
        f("cpu_apply_s", e.cpu_apply_s);
    }
};

template<>
struct Fields<RolloutEvent>
{
    static constexpr const char* kName = "rollouts";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("worker", e.worker);
        f("round", e.round);
        f("behaviour_version", e.behaviour_version);
        f("started_s", e.started_s);
        f("done_s", e.done_s);
        f("real_bytes", e.real_bytes);
        f("wire_bytes", e.wire_bytes);
        f("cpu_s", e.cpu_s);
        f("overrun_s", e.overrun_s);
    }
};

template<>
struct Fields<CatchUpEvent>
{
    static constexpr const char* kName = "catch_ups";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("worker", e.worker);
        f("from_version", e.from_version);
        f("snapshot_version", e.snapshot_version);
        f("to_version", e.to_version);
        f("done_s", e.done_s);
        f("ok", e.ok);
    }
};

template<>
struct Fields<FaultRecord>
{
    static constexpr const char* kName = "faults";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("kind", e.kind);
        f("target", e.target);
        f("start_s", e.start_s);
        f("end_s", e.end_s);
        f("workers", e.workers);
        f("injected", e.injected);
        f("dropped_up", e.dropped_up);
        f("dropped_down", e.dropped_down);
    }
};

template<>
struct Fields<WorkerEnd>
{
    static constexpr const char* kName = "worker_end";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("alive", e.alive);
        f("version", e.version);
        f("state_hash", e.state_hash);
    }
};

template<>
struct Fields<LinkUsage>
{
    static constexpr const char* kName = "links";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("link", e.link);
        f("direction", e.direction);
        f("bandwidth_bps", e.bandwidth_bps);
        f("bytes", e.bytes);
        f("packets", e.packets);
        f("mean_utilisation", e.mean_utilisation);
        f("peak_utilisation", e.peak_utilisation);
        f("window_s", e.window_s);
    }
};

template<>
struct Fields<TcpTraceSample>
{
    static constexpr const char* kName = "tcp_trace.sample";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("peer", e.peer);
        f("cwnd_bytes", e.cwnd_bytes);
        f("ssthresh_bytes", e.ssthresh_bytes);
        f("srtt_s", e.srtt_s);
        f("min_rtt_s", e.min_rtt_s);
        f("delivery_rate_bps", e.delivery_rate_bps);
        f("bytes_acked", e.bytes_acked);
        f("retransmits", e.retransmits);
        f("in_slow_start", e.in_slow_start);
        f("hystart_train_exits", e.hystart_train_exits);
        f("hystart_delay_exits", e.hystart_delay_exits);
    }
};

template<>
struct Fields<TcpTraceRow>
{
    static constexpr const char* kName = "tcp_trace";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("arm", e.arm);
        f("time_s", e.time_s);
        f("node", e.node);
        f("peer", e.peer);
        f("sample", e.sample);
    }
};

template<>
struct Fields<EmulationHealth>
{
    static constexpr const char* kName = "emulation";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("lag_mean_s", e.lag_mean_s);
        f("lag_p99_s", e.lag_p99_s);
        f("lag_max_s", e.lag_max_s);
        f("lag_samples", e.lag_samples);
        f("peak_link_traffic_bps", e.peak_link_traffic_bps);
        f("carried_peak_bps", e.carried_peak_bps);
        f("warnings", e.warnings);
    }
};

template<>
struct Fields<NodePeakRss>
{
    static constexpr const char* kName = "node_peak_rss";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("node", e.node);
        f("kib", e.kib);
    }
};

template<>
struct Fields<hilo::BudgetPurchase>
{
    static constexpr const char* kName = "purchase";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        // The unit travels as its number (hilo::BudgetUnit's order); the decoder checks the range.
        uint8_t unit = static_cast<uint8_t>(e.unit);
        f("unit", unit);
        if constexpr (!std::is_const_v<E>)
            e.unit = static_cast<hilo::BudgetUnit>(
                std::min<uint8_t>(unit, static_cast<uint8_t>(hilo::BudgetUnit::kEntries)));
        f("modelled", e.modelled);
        f("learner", e.learner);
    }
};

template<>
struct Fields<ArmResult>
{
    static constexpr const char* kName = "arm";

    template<typename F, typename E>
    static void Visit(F& f, E& e)
    {
        f("name", e.name);
        f("strategy", e.strategy);
        f("compressor", e.compressor);
        f("compressor_params", e.compressor_params);
        f("budget", e.budget);
        f("budget_fraction", e.budget_fraction);
        f("budget_transfer", e.budget_transfer);
        f("purchase", e.purchase);
        f("training_rank", e.training_rank);
        f("quality_metric", e.quality_metric);
        f("higher_is_better", e.higher_is_better);
        f("real_numel", e.real_numel);
        f("real_adapter_bytes", e.real_adapter_bytes);
        f("adapter_bytes", e.adapter_bytes);
        f("adapter_scale", e.adapter_scale);
        f("worker_gpu", e.worker_gpu);
        f("worker_region", e.worker_region);
        f("matrix_names", e.matrix_names);
        f("publishes", e.publishes);
        f("evals", e.evals);
        f("applies", e.applies);
        f("rollouts", e.rollouts);
        f("catch_ups", e.catch_ups);
        f("faults", e.faults);
        f("worker_end", e.worker_end);
        f("hash_mismatches", e.hash_mismatches);
        f("resyncs", e.resyncs);
        f("segments_corrupted", e.segments_corrupted);
        f("connections_closed", e.connections_closed);
        f("sim_time_s", e.sim_time_s);
        f("workers_at_final_hash", e.workers_at_final_hash);
        f("links", e.links);
        f("tcp_trace", e.tcp_trace);
        f("real_time", e.real_time);
        f("worker_pid", e.worker_pid);
        f("emulation", e.emulation);
        f("node_peak_rss", e.node_peak_rss);
        f("network_model", e.network_model);
        f("connections", e.connections);
        f("window_limited_connections", e.window_limited_connections);
        f("window_limited_example", e.window_limited_example);
        f("wall_s", e.wall_s);
        f("cpu_s", e.cpu_s);
        f("failure", e.failure);
    }
};

class Encoder
{
  public:
    explicit Encoder(std::string* out)
      : m_w(out)
    {
    }

    template<typename T>
    void operator()(const char* name, const T& v)
    {
        if constexpr (std::is_same_v<T, bool>)
        {
            m_w.PutU8(v ? 1 : 0);
        }
        else if constexpr (std::is_integral_v<T>)
        {
            m_w.PutU64(static_cast<uint64_t>(v));
        }
        else if constexpr (std::is_same_v<T, double>)
        {
            m_w.PutF64(v);
        }
        else if constexpr (std::is_same_v<T, std::string>)
        {
            m_w.PutVarint(v.size());
            m_w.PutBytes(v.data(), v.size());
        }
        else if constexpr (IsVector<T>::value)
        {
            m_w.PutVarint(v.size());
            for (const auto& element : v)
                (*this)(name, element);
        }
        else if constexpr (IsOptional<T>::value)
        {
            (*this)(name, v.has_value());
            if (v)
                (*this)(name, *v);
        }
        else if constexpr (std::is_same_v<T, hilo::Status>)
        {
            m_w.PutU8(static_cast<uint8_t>(v.code()));
            (*this)(name, v.message());
        }
        else
        {
            Fields<T>::Visit(*this, v);
        }
    }

  private:
    hilo::ByteWriter m_w;
};

class Decoder
{
  public:
    explicit Decoder(std::string_view in)
      : m_r(in)
    {
    }

    template<typename T>
    void operator()(const char* name, T& v)
    {
        if (!m_error.empty())
            return;
        if constexpr (std::is_same_v<T, bool>)
        {
            uint8_t b = 0;
            if (!m_r.GetU8(&b) || b > 1)
                return Fail(name, "not a bool (0 or 1)");
            v = b == 1;
        }
        else if constexpr (std::is_integral_v<T>)
        {
            uint64_t u = 0;
            if (!m_r.GetU64(&u))
                return Fail(name, "truncated");
            if constexpr (std::is_unsigned_v<T>)
            {
                if (u > std::numeric_limits<T>::max())
                    return Fail(name, "out of range");
            }
            v = static_cast<T>(u);
        }
        else if constexpr (std::is_same_v<T, double>)
        {
            if (!m_r.GetF64(&v))
                return Fail(name, "truncated");
        }
        else if constexpr (std::is_same_v<T, std::string>)
        {
            std::string_view bytes;
            uint64_t size = 0;
            if (!m_r.GetVarint(&size) || size > m_r.remaining() || !m_r.GetBytes(size, &bytes))
                return Fail(name, "truncated");
            v.assign(bytes.data(), bytes.size());
        }
        else if constexpr (IsVector<T>::value)
        {
            uint64_t count = 0;
            // Every element takes at least one byte: a count above the bytes left is corrupt
            // (and is refused before anything is allocated for it).
            if (!m_r.GetVarint(&count) || count > m_r.remaining())
                return Fail(name, "count truncated or above the bytes left");
            v.assign(count, typename T::value_type());
            for (auto& element : v)
                (*this)(name, element);
        }
        else if constexpr (IsOptional<T>::value)
        {
            bool present = false;
            (*this)(name, present);
            if (present)
            {
                v.emplace();
                (*this)(name, *v);
            }
        }
        else if constexpr (std::is_same_v<T, hilo::Status>)
        {
            uint8_t code = 0;
            std::string message;
            if (!m_r.GetU8(&code) || code > static_cast<uint8_t>(hilo::StatusCode::kInternal))
                return Fail(name, "not a status code");
            (*this)(name, message);
            v = code == 0 ? hilo::Status::Ok()
                          : hilo::Status(static_cast<hilo::StatusCode>(code), std::move(message));
        }
        else
        {
            Fields<T>::Visit(*this, v);
            if (!m_error.empty() && m_record.empty())
                m_record = Fields<T>::kName;
        }
    }

    /// "" when every field so far was read.
    std::string Error() const
    {
        if (m_error.empty())
            return "";
        return (m_record.empty() ? "" : m_record + ".") + m_error;
    }

    size_t remaining() const { return m_r.remaining(); }

  private:
    void Fail(const char* name, const char* why) { m_error = std::string(name) + ": " + why; }

    hilo::ByteReader m_r;
    std::string m_error;  // the first field that failed, and why
    std::string m_record; // the innermost record holding it
};

} // namespace

std::string
EncodeArmResult(const ArmResult& result)
{
    std::string out(kMagic);
    Encoder encoder(&out);
    Fields<ArmResult>::Visit(encoder, result);
    return out;
}

hilo::StatusOr<ArmResult>
DecodeArmResult(std::string_view bytes)
{
    if (bytes.substr(0, kMagic.size()) != kMagic)
    {
        return hilo::Status::Corruption("arm result: bytes do not start with \"HILOARM1\"");
    }
    Decoder decoder(bytes.substr(kMagic.size()));
    ArmResult result;
    Fields<ArmResult>::Visit(decoder, result);
    if (!decoder.Error().empty())
    {
        return hilo::Status::Corruption("arm result: " + decoder.Error());
    }
    if (decoder.remaining() != 0)
    {
        return hilo::Status::Corruption("arm result: " + std::to_string(decoder.remaining()) +
                                        " bytes after the last field");
    }
    return result;
}

} // namespace hilosim

#include "hilo/sync/strategy-util.h"

#include "hilo/core/coding.h"
#include "hilo/core/finite.h"
#include "hilo/core/parallel.h"

#include <atomic>
#include <chrono>

namespace hilo
{

bool
AddVectors(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>* out)
{
    out->resize(a.size());
    const float* pa = a.data();
    const float* pb = b.data();
    float* po = out->data();
    std::atomic<bool> bad{false};
    ParallelFor(0, static_cast<int64_t>(a.size()), 1 << 15,
                [&](int64_t begin, int64_t end)
                {
                    uint32_t acc = 0;
                    for (int64_t i = begin; i < end; ++i)
                    {
                        const float sum = pa[i] + pb[i];
                        po[i] = sum;
                        acc |= NonFiniteBits(sum);
                    }
                    if (NonFiniteSeen(acc))
                    {
                        bad.store(true, std::memory_order_relaxed);
                    }
                });
    return !bad.load();
}

Status
ApplyDecodedDelta(const Compressor& compressor, std::string_view payload, const ReplicatedState& in,
                  ReplicatedState* out, std::vector<float>* scratch)
{
    HILO_RETURN_IF_ERROR(compressor.Decode(payload, scratch));
    if (!AddVectors(in.adapter.theta, *scratch, &out->adapter.theta))
    {
        return Status::Corruption(compressor.Name() +
                                  ": the parameters plus the decoded change are not finite");
    }
    out->optimizer = OptimizerState();
    return Status::Ok();
}

std::string
SaveLearnerLocalState(const ErrorFeedback* ef, const Compressor& compressor)
{
    std::string out;
    ByteWriter w(&out);
    const std::vector<float> none;
    const std::vector<float>& residual = ef ? ef->residual() : none;
    w.PutU64(residual.size());
    w.PutFloats(residual.data(), residual.size(), ValueDtype::kFp32);
    const std::string local = compressor.SaveLocalState();
    w.PutU64(local.size());
    w.PutBytes(local.data(), local.size());
    return out;
}

Status
RestoreLearnerLocalState(std::string_view state, ErrorFeedback* ef, Compressor* compressor)
{
    ByteReader r(state);
    uint64_t n = 0;
    const uint64_t expected = ef ? ef->residual().size() : 0;
    if (!r.GetU64(&n) || n != expected)
    {
        return Status::Corruption("learner-local state: residual of " + std::to_string(n) +
                                  " values, expected " + std::to_string(expected));
    }
    std::vector<float> residual(n);
    uint64_t m = 0;
    std::string_view local;
    if (!r.GetFloats(residual.data(), n, ValueDtype::kFp32) || !r.GetU64(&m) ||
        !r.GetBytes(m, &local) || !r.empty())
    {
        return Status::Corruption("learner-local state truncated or too long");
    }
    if (!AllFinite(residual.data(), static_cast<int64_t>(n)))
    {
        return Status::Corruption("learner-local state: the residual holds a non-finite value");
    }
    HILO_RETURN_IF_ERROR(compressor->RestoreLocalState(local));
    if (ef)
    {
        ef->set_residual(std::move(residual));
    }
    return Status::Ok();
}

int64_t
NowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double
SecondsSince(int64_t start_ns)
{
    return static_cast<double>(NowNs() - start_ns) * 1e-9;
}

} // namespace hilo

#include "hilo/compress/allocation-policy.h"

#include "hilo/core/coding.h"
#include "hilo/core/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace hilo
{

std::vector<double>
PreconditionedWeights(const AdapterLayout& layout, const std::vector<float>& x,
                      const OptimizerState& state, const OptimizerConfig& config)
{
    const size_t n = layout.size();
    std::vector<double> w(n, 0.0);
    const double beta2 = config.beta2;
    const double eps = config.eps;
    // The bias correction of the step this payload will be replayed as (replay keeps beta2^t as
    // a running fp32 product).
    const double correction = 1.0 - static_cast<double>(state.beta2_prod) * beta2;
    ParallelFor(0, static_cast<int64_t>(n), 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t t = b; t < e; ++t)
                    {
                        const size_t i = static_cast<size_t>(t);
                        const int64_t at = layout.offset(i);
                        const int64_t len = layout.matrix(i).numel();
                        double energy = 0.0;
                        double preconditioned = 0.0;
                        for (int64_t k = at; k < at + len; ++k)
                        {
                            const double xk = x[static_cast<size_t>(k)];
                            const double x2 = xk * xk;
                            const double vhat =
                                (beta2 * state.v[static_cast<size_t>(k)] + (1.0 - beta2) * x2) /
                                correction;
                            const double d = std::sqrt(vhat) + eps;
                            energy += x2;
                            preconditioned += x2 / (d * d);
                        }
                        w[i] = energy > 0.0 ? preconditioned / energy : 0.0;
                    }
                });
    return w;
}

namespace
{

/// The shortest text that reads back as the same double.
std::string
ShortestDouble(double value)
{
    char buf[32];
    for (int precision = 1; precision <= 17; ++precision)
    {
        std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
        if (std::strtod(buf, nullptr) == value)
            break;
    }
    return buf;
}

} // namespace

AllocationPolicy::AllocationPolicy(const AdapterLayout& layout, OptionReader* r,
                                   bool uniform_allowed)
  : m_layout(layout)
{
    std::set<std::string> allowed = {"energy", "greedy", "preconditioned"};
    if (uniform_allowed)
        allowed.insert("uniform");
    const std::string allocation = r->Choice("allocation", "energy", allowed);
    m_uniform = allocation == "uniform";
    m_preconditioned = allocation == "preconditioned";
    m_coverage = r->Int("coverage", 0, 0, 1 << 20);
    m_ef_max_ratio = r->Double("ef_max_ratio", 0.0, 0.0, 1e6);
    m_replicated = r->Choice("basis", "fresh", {"fresh", "replicated"}) == "replicated";
    m_basis_width = r->Int("basis_width", 0, 0, 1 << 20);
    m_basis_share = r->Double("basis_share", kDefaultBasisShare, 0.0, 1.0);
    m_basis_share_set = r->Has("basis_share");
    m_basis_width_set = r->Has("basis_width");
    m_since.assign(layout.size(), 0);
}

Status
AllocationPolicy::Validate(const std::string& name) const
{
    if (!m_replicated && (m_basis_width_set || m_basis_share_set))
    {
        return Status::InvalidArgument(name + ": options basis_width and basis_share need "
                                              "basis=replicated");
    }
    if (m_replicated && m_basis_share <= 0.0)
    {
        return Status::InvalidArgument(name + ": option basis_share must be above 0 (the share "
                                              "of the bytes the basis may take), got 0");
    }
    if (m_replicated && name != "spar")
    {
        return Status::InvalidArgument(name + " option 'basis': \"replicated\" is built for spar "
                                              "only; use basis=fresh (the default) or spar");
    }
    if (m_replicated && m_uniform)
    {
        return Status::InvalidArgument(name + ": basis=replicated needs a greedy allocation "
                                              "(energy or preconditioned), not uniform");
    }
    return Status::Ok();
}

const char*
AllocationPolicy::AllocationName() const
{
    return m_uniform ? "uniform" : m_preconditioned ? "preconditioned" : "energy";
}

void
AllocationPolicy::AddParams(CompressorOptions* o, bool with_allocation) const
{
    if (with_allocation || m_preconditioned)
        (*o)["allocation"] = AllocationName();
    if (m_coverage > 0)
        (*o)["coverage"] = std::to_string(m_coverage);
    if (m_ef_max_ratio > 0.0)
        (*o)["ef_max_ratio"] = ShortestDouble(m_ef_max_ratio);
    if (m_replicated)
    {
        (*o)["basis"] = "replicated";
        (*o)["basis_share"] = ShortestDouble(m_basis_share);
        (*o)["basis_width"] = std::to_string(m_basis_width);
    }
}

StatusOr<const AllocationHints*>
AllocationPolicy::Hints(const std::vector<float>& x, const std::string& name)
{
    if (!m_preconditioned && m_coverage == 0)
        return static_cast<const AllocationHints*>(nullptr);
    m_hints.weights.clear();
    m_hints.overdue.clear();
    if (m_preconditioned)
    {
        if (m_state == nullptr || m_config == nullptr ||
            m_state->v.size() != static_cast<size_t>(m_layout.numel()))
        {
            return Status::InvalidArgument(
                name + ": allocation=preconditioned needs the replayed optimizer's second moment "
                       "(strategy hilo with the adamw optimizer)");
        }
        m_hints.weights = PreconditionedWeights(m_layout, x, *m_state, *m_config);
    }
    if (m_coverage > 0)
    {
        m_hints.overdue.assign(m_layout.size(), 0);
        for (size_t i = 0; i < m_since.size(); ++i)
        {
            // Received nothing for the last N - 1 updates: this one must carry a triplet.
            if (m_since[i] + 1 >= m_coverage)
                m_hints.overdue[i] = m_since[i] + 2 - m_coverage;
        }
    }
    return static_cast<const AllocationHints*>(&m_hints);
}

void
AllocationPolicy::Commit(const std::vector<int64_t>& ks)
{
    if (m_coverage == 0)
        return;
    for (size_t i = 0; i < m_since.size() && i < ks.size(); ++i)
        m_since[i] = ks[i] > 0 ? 0 : m_since[i] + 1;
}

std::string
AllocationPolicy::SaveState() const
{
    std::string out;
    if (m_coverage == 0)
        return out;
    ByteWriter w(&out);
    w.PutVarint(m_since.size());
    for (int64_t s : m_since)
        w.PutVarint(static_cast<uint64_t>(s));
    return out;
}

Status
AllocationPolicy::RestoreState(std::string_view state, const std::string& name, bool apply)
{
    if (m_coverage == 0)
    {
        return state.empty() ? Status::Ok()
                             : Status::Corruption(name + ": coverage counters without coverage");
    }
    ByteReader r(state);
    uint64_t count = 0;
    if (!r.GetVarint(&count) || count != m_since.size())
    {
        return Status::Corruption(name + ": coverage counters for a different layout");
    }
    std::vector<int64_t> since(m_since.size());
    for (int64_t& s : since)
    {
        uint64_t v = 0;
        if (!r.GetVarint(&v) || v > (uint64_t{1} << 62))
            return Status::Corruption(name + ": truncated or invalid coverage counter");
        s = static_cast<int64_t>(v);
    }
    if (!r.empty())
        return Status::Corruption(name + ": trailing bytes after the coverage counters");
    if (apply)
        m_since = std::move(since);
    return Status::Ok();
}

std::string
SaveEncoderState(const SpectralTruncation& spectra, const AllocationPolicy& policy)
{
    std::string warm = spectra.SaveWarmState();
    if (policy.coverage() == 0)
        return warm;
    std::string out;
    ByteWriter w(&out);
    w.PutVarint(warm.size());
    w.PutBytes(warm.data(), warm.size());
    const std::string coverage = policy.SaveState();
    w.PutBytes(coverage.data(), coverage.size());
    return out;
}

Status
RestoreEncoderState(std::string_view state, const std::string& name, SpectralTruncation* spectra,
                    AllocationPolicy* policy)
{
    if (policy->coverage() == 0)
        return spectra->RestoreWarmState(state, name);
    ByteReader r(state);
    uint64_t len = 0;
    std::string_view warm;
    if (!r.GetVarint(&len) || len > r.remaining() || !r.GetBytes(static_cast<size_t>(len), &warm))
        return Status::Corruption(name + ": truncated local state");
    const std::string_view coverage = state.substr(state.size() - r.remaining());
    // Both parts checked before either changes.
    HILO_RETURN_IF_ERROR(policy->RestoreState(coverage, name, /*apply=*/false));
    HILO_RETURN_IF_ERROR(spectra->RestoreWarmState(warm, name));
    return policy->RestoreState(coverage, name);
}

} // namespace hilo

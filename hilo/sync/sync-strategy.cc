#include "hilo/sync/sync-strategy.h"

#include "hilo/compress/base-aware.h"
#include "hilo/compress/compressor-factory.h"
#include "hilo/compress/replay-aware.h"
#include "hilo/core/hash.h"
#include "hilo/sync/strategies.h"

#include <cmath>

namespace hilo
{
namespace
{

/// True when the compressor's canonical options enable its own error feedback (powersgd's
/// error_feedback=true).
bool
CompressorKeepsOwnErrorFeedback(const Compressor& c)
{
    StatusOr<CompressorOptions> params = ParseCompressorOptions(c.Params());
    if (!params.ok())
    {
        return false;
    }
    const auto it = params->find("error_feedback");
    return it != params->end() && it->second == "true";
}

} // namespace

const char*
SyncKindName(SyncKind k)
{
    switch (k)
    {
        case SyncKind::kFull:
            return "full";
        case SyncKind::kHilo:
            return "hilo";
        case SyncKind::kDelta:
            return "delta";
        case SyncKind::kPrimal:
            return "primal";
    }
    return "unknown";
}

StatusOr<SyncKind>
ParseSyncKind(std::string_view name)
{
    for (SyncKind k : {SyncKind::kFull, SyncKind::kHilo, SyncKind::kDelta, SyncKind::kPrimal})
    {
        if (name == SyncKindName(k))
            return k;
    }
    return Status::InvalidArgument("unknown sync strategy '" + std::string(name) +
                                   "' (allowed: full, hilo, delta, primal)");
}

uint64_t
SyncStrategy::ConfigHash(const OptimizerConfig& optimizer) const
{
    Hasher h;
    h.AddString("hilo-config-v1");
    h.AddU64(compressor().layout().Fingerprint());
    h.AddU64(optimizer.Fingerprint());
    h.AddU64(static_cast<uint64_t>(kind()));
    h.AddString(compressor().Name());
    h.AddString(compressor().Params());
    return h.Digest();
}

StatusOr<std::unique_ptr<SyncStrategy>>
NewSyncStrategy(const SyncSpec& spec, const AdapterLayout& layout, const OptimizerConfig& optimizer)
{
    HILO_RETURN_IF_ERROR(optimizer.Validate());
    HILO_RETURN_IF_ERROR(spec.budget.Validate());
    if (spec.kind == SyncKind::kFull && spec.compressor != "dense")
    {
        return Status::InvalidArgument("the full strategy ships parameters with the dense "
                                       "compressor (dtype=fp32|bf16); got compressor '" +
                                       spec.compressor + "'");
    }
    const ErrorFeedbackOptions& ef = spec.error_feedback;
    if (!(std::isfinite(ef.decay) && ef.decay > 0.0f && ef.decay <= 1.0f))
    {
        return Status::InvalidArgument("error_feedback.decay must be in (0, 1], got " +
                                       std::to_string(ef.decay));
    }
    if (ef.enabled && spec.kind == SyncKind::kFull)
    {
        return Status::InvalidArgument("the full strategy ships parameters and has no error "
                                       "feedback; set error_feedback.enabled to false");
    }
    StatusOr<std::unique_ptr<Compressor>> compressor =
        NewCompressor(spec.compressor, layout, spec.compressor_options);
    if (!compressor.ok())
    {
        return compressor.status();
    }
    const bool base_aware = dynamic_cast<const BaseAwareCompressor*>(compressor->get()) != nullptr;
    if (base_aware && spec.kind != SyncKind::kDelta && spec.kind != SyncKind::kPrimal)
    {
        return Status::InvalidArgument("compressor '" + spec.compressor +
                                       "' encodes parameter changes against what the replicas "
                                       "hold; use it with strategy delta or primal, not " +
                                       SyncKindName(spec.kind));
    }
    if (base_aware && !spec.budget.unlimited())
    {
        return Status::InvalidArgument("compressor '" + spec.compressor +
                                       "' ships exact parameter changes and takes no byte "
                                       "budget; leave the budget empty (got " +
                                       spec.budget.ToString() + ")");
    }
    if (ef.enabled && CompressorKeepsOwnErrorFeedback(**compressor))
    {
        return Status::InvalidArgument(
            "compressor '" + spec.compressor +
            "' runs its own error feedback (error_feedback=true in its options); the strategy's "
            "error feedback would feed the same error back twice, so enable only one of them");
    }
    ErrorFeedbackOptions error_feedback = spec.error_feedback;
    if (const auto* ra = dynamic_cast<const ReplayAwareCompressor*>(compressor->get()))
    {
        if (ra->NeedsOptimizerState() &&
            (spec.kind != SyncKind::kHilo || !optimizer.UsesSecondMoment()))
        {
            return Status::InvalidArgument(
                "compressor '" + spec.compressor +
                "' options allocation=preconditioned and basis=replicated read the optimizer "
                "state the replicas replay Adam with; use them with strategy hilo and optimizer "
                "adamw (got strategy " +
                SyncKindName(spec.kind) + ", optimizer " + OptimizerKindName(optimizer.kind) + ")");
        }
        if (ra->ErrorFeedbackMaxRatio() > 0.0)
        {
            if (spec.kind != SyncKind::kHilo || !ef.enabled)
            {
                return Status::InvalidArgument(
                    "compressor '" + spec.compressor +
                    "' option ef_max_ratio bounds the hilo strategy's error-feedback residual; "
                    "use it with strategy hilo and error_feedback.enabled true");
            }
            error_feedback.max_ratio = ra->ErrorFeedbackMaxRatio();
        }
    }
    const int64_t budget_bytes = spec.budget.ResolveBytes(layout.adapter_bytes());
    if (budget_bytes < (*compressor)->MinPayloadBytes())
    {
        return Status::BudgetTooSmall(
            "budget " + spec.budget.ToString() + " = " + std::to_string(budget_bytes) +
            " bytes is below the smallest " + spec.compressor + " payload for this adapter (" +
            std::to_string((*compressor)->MinPayloadBytes()) + " bytes)");
    }
    switch (spec.kind)
    {
        case SyncKind::kFull:
            return NewFullStrategy(std::move(*compressor), optimizer);
        case SyncKind::kHilo:
            return NewHiloStrategy(std::move(*compressor), optimizer, budget_bytes, error_feedback);
        case SyncKind::kDelta:
            return NewDeltaStrategy(std::move(*compressor), optimizer, budget_bytes,
                                    spec.error_feedback);
        case SyncKind::kPrimal:
            return NewPrimalStrategy(std::move(*compressor), optimizer, budget_bytes,
                                     spec.error_feedback);
    }
    return Status::InvalidArgument("unknown sync strategy");
}

} // namespace hilo

#include "hilo/optim/optimizer-config.h"

#include "hilo/optim/cos-pi.h"

#include "hilo/core/hash.h"

#include <cmath>

namespace hilo
{

float
LearningRate(const LrSchedule& s, uint64_t step)
{
    const double base = s.base_lr;
    const double t = static_cast<double>(step);
    if (s.kind != LrScheduleKind::kConstant && s.warmup_steps > 0 &&
        step <= static_cast<uint64_t>(s.warmup_steps))
    {
        return static_cast<float>(base * t / static_cast<double>(s.warmup_steps));
    }
    if (s.kind != LrScheduleKind::kCosine)
    {
        return s.base_lr;
    }
    const double span = static_cast<double>(s.total_steps - s.warmup_steps);
    double progress = span > 0 ? (t - static_cast<double>(s.warmup_steps)) / span : 1.0;
    if (progress > 1.0)
    {
        progress = 1.0;
    }
    const double floor = base * s.min_lr_ratio;
    // CosPi, not std::cos: the host's libm must not decide the last bit of the rate.
    return static_cast<float>(floor + (base - floor) * 0.5 * (1.0 + CosPi(progress)));
}

Status
OptimizerConfig::Validate() const
{
    auto bad = [](const std::string& what)
    { return Status::InvalidArgument("optimizer: " + what); };
    if (!(lr.base_lr >= 0.0f) || !std::isfinite(lr.base_lr))
        return bad("lr must be finite and >= 0");
    if (lr.warmup_steps < 0)
        return bad("warmup_steps must be >= 0");
    if (lr.kind == LrScheduleKind::kCosine && lr.total_steps <= 0)
        return bad("total_steps must be > 0 for a cosine schedule");
    if (!(lr.min_lr_ratio >= 0.0f && lr.min_lr_ratio <= 1.0f))
        return bad("min_lr_ratio must be in [0, 1]");
    if (!(beta1 >= 0.0f && beta1 < 1.0f))
        return bad("beta1 must be in [0, 1)");
    if (!(beta2 >= 0.0f && beta2 < 1.0f))
        return bad("beta2 must be in [0, 1)");
    if (!(eps > 0.0f) || !std::isfinite(eps))
        return bad("eps must be finite and > 0");
    if (!(weight_decay >= 0.0f) || !std::isfinite(weight_decay))
        return bad("weight_decay must be finite and >= 0");
    if (!(momentum >= 0.0f && momentum < 1.0f))
        return bad("momentum must be in [0, 1)");
    if (!(dampening >= 0.0f && dampening <= 1.0f))
        return bad("dampening must be in [0, 1]");
    if (v_freeze_step < 0)
        return bad("v_freeze_step must be >= 0");
    if (v_freeze_step > 0 && kind != OptimizerKind::kAdamW)
        return bad("v_freeze_step needs adamw (sgd keeps no second moment)");
    return Status::Ok();
}

uint64_t
OptimizerConfig::Fingerprint() const
{
    Hasher h;
    h.AddU64(static_cast<uint64_t>(kind));
    h.AddU64(static_cast<uint64_t>(lr.kind));
    h.AddF32(lr.base_lr);
    h.AddU64(static_cast<uint64_t>(lr.warmup_steps));
    h.AddU64(static_cast<uint64_t>(lr.total_steps));
    h.AddF32(lr.min_lr_ratio);
    h.AddF32(beta1);
    h.AddF32(beta2);
    h.AddF32(eps);
    h.AddF32(weight_decay);
    h.AddF32(momentum);
    h.AddF32(dampening);
    if (v_freeze_step > 0) // only when set: every fingerprint made before the field existed holds
        h.AddU64(static_cast<uint64_t>(v_freeze_step));
    return h.Digest();
}

const char*
OptimizerKindName(OptimizerKind k)
{
    return k == OptimizerKind::kAdamW ? "adamw" : "sgd";
}

StatusOr<OptimizerKind>
ParseOptimizerKind(std::string_view name)
{
    if (name == "adamw")
        return OptimizerKind::kAdamW;
    if (name == "sgd")
        return OptimizerKind::kSgdMomentum;
    return Status::InvalidArgument("unknown optimizer '" + std::string(name) +
                                   "' (allowed: adamw, sgd)");
}

const char*
LrScheduleKindName(LrScheduleKind k)
{
    switch (k)
    {
        case LrScheduleKind::kConstant:
            return "constant";
        case LrScheduleKind::kLinearWarmup:
            return "linear_warmup";
        case LrScheduleKind::kCosine:
            return "cosine";
    }
    return "unknown";
}

StatusOr<LrScheduleKind>
ParseLrScheduleKind(std::string_view name)
{
    for (LrScheduleKind k :
         {LrScheduleKind::kConstant, LrScheduleKind::kLinearWarmup, LrScheduleKind::kCosine})
    {
        if (name == LrScheduleKindName(k))
            return k;
    }
    return Status::InvalidArgument("unknown lr schedule '" + std::string(name) +
                                   "' (allowed: constant, linear_warmup, cosine)");
}

} // namespace hilo

// AllocationPolicy: the options spar and sparq share that steer the rank allocation by what HiLo
// does with the payload (issue 36, "Spar that knows its optimizer"). All of them but
// basis=replicated are encoder-only: the payload format, and so Decode, does not change.
//
//   allocation=energy|preconditioned (spar also: uniform; greedy is energy's older name)
//     energy: the greedy of SparAllocate by sigma_ij^2 / cost_i, the Frobenius energy of X = G + e
//     per byte (the paper's rule, the default).
//     preconditioned: the gain of triplet j of matrix i is sigma_ij^2 w_i, with
//       w_i = sum_ab X_ab^2 / D_ab^2 / sum_ab X_ab^2,   D_ab = sqrt(v_hat_ab) + eps,
//       v_hat = (beta2 v + (1 - beta2) X^2) / (1 - beta2_prod beta2),
//     v the second moment the learner and every replica hold (bit-identical; hilo strategy only)
//     and v_hat the bias-corrected one Adam will divide this step by. HiLo replays AdamW on what
//     arrives, and Adam moves a coordinate by about lr m_hat / D whatever its scale, so what a
//     triplet buys is the norm of its preconditioned contribution ||(u s v^T) / D||^2, not s^2.
//     That norm is s^2 sum_ab u_a^2 v_b^2 / D_ab^2: a weighted mean of 1 / D^2 with weights
//     u_a^2 v_b^2. w_i replaces those weights by the matrix's own X_ab^2 / ||X||^2 (the energy the
//     leading triplets hold: 62-97% in the measured gradients), so it is exact for a rank-1 X and
//     for a D constant over the matrix, costs one pass over X and v per encode (instead of one per
//     candidate triplet) and keeps each matrix's gains sorted, which the greedy needs. X^2 in
//     v_hat is the step's own contribution to Adam's denominator: without it a matrix never
//     shipped (v = 0) would weigh 1 / eps^2 and take the budget whatever its gradient; with it
//     such a matrix weighs at most (1 - beta2_prod beta2) / (1 - beta2) per unit of energy, the
//     normalised first step Adam will take there. Same-scale matrices keep energy's order; a
//     matrix whose gradient is 1000x smaller but as concentrated is no longer starved.
//   coverage=N (default 0 = off): every matrix whose spectrum offers a non-zero triplet receives
//     at least one within N updates: a matrix that has received none for N - 1 updates is given
//     one before the greedy runs (the most overdue first, then layout order), as far as the
//     budget holds them. The counters are learner-local state (SaveState).
//   ef_max_ratio=R (default 0 = unbounded): the hilo strategy's error feedback keeps
//     ||e|| <= R ||G|| (hilo/compress/error-feedback.h). Needs error feedback.
//   basis=fresh|replicated (default fresh: each payload ships its own triplets). replicated
//     (spar only, greedy allocation, strategy hilo with adamw): the payload may also ship a
//     direction of the basis learner and replicas derive from Adam's first moment
//     (hilo/compress/replicated-basis.h) as its m short-side coefficients alone; the format is
//     spar's `spar-rb-v1` (hilo/compress/spar.h) and Decode needs the state too.
//     basis_width=N (default 0 = up to m_i): the most directions a matrix's basis holds.
//     basis_share=S (0 < S <= 1, default kDefaultBasisShare): the refresh rule. The basis comes
//     from what was shipped, so payloads of coefficients alone would keep M, and so the basis,
//     inside the span it already has (lock-in); only fresh triplets bring new directions into
//     M. So the coefficients take at most S of the bytes left after the header, and never so
//     many that one fresh triplet of the costliest matrix (among those whose triplet fits the
//     budget at all) no longer fits beside them. The greedy then takes coefficients and fresh
//     triplets by gain per byte within those bounds.
#ifndef HILO_COMPRESS_ALLOCATION_POLICY_H
#define HILO_COMPRESS_ALLOCATION_POLICY_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/spar.h"
#include "hilo/compress/spectral-truncation.h"
#include "hilo/core/adapter-layout.h"
#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

/// basis_share's default: half the bytes may go to coefficients in the replicated basis.
constexpr double kDefaultBasisShare = 0.5;

/// Per-matrix inputs to SparAllocate beyond the spectra (empty vectors: none).
struct AllocationHints
{
    std::vector<double> weights;  // gain multiplier w_i (preconditioned)
    std::vector<int64_t> overdue; // > 0: give matrix i one triplet first (coverage)
    // More candidates allocated with the matrices' triplets under the same budget (spar's
    // basis=replicated: the coefficients in the replicated basis); their ranks come back in
    // SpectralPlan::extra_ks. Those marked capped share `extra_cap` bytes (-1: no cap).
    std::vector<SparCandidates> extra;
    int64_t extra_cap{-1};
};

/// w_i of the header comment for every matrix of `layout` (0 where X_i is zero). Each matrix is
/// summed in double in a fixed order by one thread: the same on every thread count.
/// REQUIRES: x and state.v have layout.numel() values.
std::vector<double> PreconditionedWeights(const AdapterLayout& layout, const std::vector<float>& x,
                                          const OptimizerState& state,
                                          const OptimizerConfig& config);

class AllocationPolicy
{
  public:
    /// Reads allocation, coverage, ef_max_ratio and basis from `r` (errors stay in `r` until its
    /// Finish()); `uniform_allowed`: spar's allocation also accepts uniform.
    AllocationPolicy(const AdapterLayout& layout, OptionReader* r, bool uniform_allowed);
    /// The checks Finish() cannot make (prefixed `name`): basis=replicated on spar only, with a
    /// greedy allocation; basis_width and basis_share only with it.
    Status Validate(const std::string& name) const;

    SparAllocation mode() const
    {
        return m_uniform ? SparAllocation::kUniform : SparAllocation::kGreedy;
    }
    bool preconditioned() const { return m_preconditioned; }
    int64_t coverage() const { return m_coverage; }
    double ef_max_ratio() const { return m_ef_max_ratio; }
    bool replicated_basis() const { return m_replicated; }
    int64_t basis_width() const { return m_basis_width; }
    double basis_share() const { return m_basis_share; }
    /// "energy", "preconditioned" or "uniform".
    const char* AllocationName() const;
    /// Adds the non-default options (coverage, ef_max_ratio, basis and its two) to `o`;
    /// `with_allocation` also adds allocation (spar names it always; sparq only when
    /// preconditioned).
    void AddParams(CompressorOptions* o, bool with_allocation) const;

    void SetOptimizerState(const OptimizerState* state, const OptimizerConfig* config)
    {
        m_state = state;
        m_config = config;
    }
    const OptimizerState* optimizer_state() const { return m_state; }
    /// The hints for encoding `x`, or null when none apply (energy, no coverage). kInvalidArgument
    /// (prefixed `name`) when preconditioned and no second moment of the layout's size was set.
    StatusOr<const AllocationHints*> Hints(const std::vector<float>& x, const std::string& name);
    /// After a successful encode with ranks `ks`: the coverage counters advance.
    void Commit(const std::vector<int64_t>& ks);

    /// Coverage counters (varint count, varint updates-without-a-triplet each); empty without
    /// coverage.
    std::string SaveState() const;
    /// kCorruption (prefixed `name`, counters unchanged) for a wrong count, a truncated value or
    /// trailing bytes. `apply` false only checks (so that a caller restoring several parts can
    /// check them all before changing any).
    Status RestoreState(std::string_view state, const std::string& name, bool apply = true);

  private:
    AdapterLayout m_layout;
    bool m_uniform{false};
    bool m_preconditioned{false};
    int64_t m_coverage{0};
    double m_ef_max_ratio{0.0};
    bool m_replicated{false};
    int64_t m_basis_width{0};
    double m_basis_share{kDefaultBasisShare};
    bool m_basis_width_set{false};
    bool m_basis_share_set{false};
    const OptimizerState* m_state{nullptr};
    const OptimizerConfig* m_config{nullptr};
    std::vector<int64_t> m_since; // coverage: updates since matrix i last received a triplet
    AllocationHints m_hints;      // scratch of Hints()
};

/// spar's and sparq's learner-local state: the warm bases (SpectralTruncation::SaveWarmState)
/// alone without coverage (the format before coverage existed), else varint length + warm bases,
/// then the coverage counters (AllocationPolicy::SaveState).
std::string SaveEncoderState(const SpectralTruncation& spectra, const AllocationPolicy& policy);
/// Restores SaveEncoderState's bytes; kCorruption prefixed `name`, both parts unchanged.
Status RestoreEncoderState(std::string_view state, const std::string& name,
                           SpectralTruncation* spectra, AllocationPolicy* policy);

} // namespace hilo

#endif // HILO_COMPRESS_ALLOCATION_POLICY_H

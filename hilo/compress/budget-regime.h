// What an arm's byte budget buys its compressor, on the modelled adapter and on the tiny learner,
// and the rule that hands a modelled budget to the learner (a scenario's budget_transfer).
//
// A rank-based compressor (spar, sparq, powersgd) spends its budget on rank-1 directions u s v^T,
// one costing about (rows + cols) x bytes per value of its matrix; a budget of B bytes buys
// B / sum_i cost_i directions per factor matrix when every matrix takes the same number, about
// f x r x d / (r + d) for a fraction f of a rank-r adapter on width d. The modelled Qwen2.5-7B
// rank-64 adapter gets about one direction per matrix at 1.6%; a width-128 rank-16 learner about
// 0.23 at the same fraction. Under "directions" the learner's budget is the modelled budget x
// (the learner's per-direction bytes / the modelled adapter's), so both buy the same directions
// per matrix, and an update frame's wire bytes are its real bytes x the inverse ratio.
// Entry-based compressors (topk, randk, quant) spend a budget on entries: the same fraction of
// either adapter buys the same fraction of its entries, so both rules hand them the fraction.
#ifndef HILO_COMPRESS_BUDGET_REGIME_H
#define HILO_COMPRESS_BUDGET_REGIME_H

#include "hilo/compress/compressor-options.h"
#include "hilo/core/adapter-layout.h"

#include <cstdint>
#include <string>

namespace hilo
{

/// The unit a compressor spends its budget on.
enum class BudgetUnit
{
    kNone,       // dense, pulse: no budget
    kDirections, // spar, sparq, powersgd: rank-1 directions per factor matrix
    kEntries,    // topk, randk, quant: a fraction of the adapter's entries
};

BudgetUnit CompressorBudgetUnit(const std::string& compressor);

/// Bytes one rank-1 direction of every matrix of `layout` costs together under `compressor`
/// with `options` (its value dtype or bit width; fp32 sigma for spar): sum_i cost_i.
/// REQUIRES: CompressorBudgetUnit(compressor) == kDirections.
double DirectionBytesPerRound(const AdapterLayout& layout, const std::string& compressor,
                              const CompressorOptions& options);

/// Bytes one entry costs under an entry-based compressor: its value bytes (indices not counted;
/// the same on both adapters up to their width).
double EntryValueBytes(const std::string& compressor, const CompressorOptions& options);

/// What one arm's budget buys, on both adapters.
struct BudgetPurchase
{
    BudgetUnit unit{BudgetUnit::kNone};
    double modelled{0}; // directions per matrix, or entry fraction, of the modelled adapter
    double learner{0};  // the same of the learner's (real) adapter under the arm's budget
};

/// `budget_bytes` of payload spread over `layout`: directions per matrix (kDirections) or the
/// fraction of its entries (kEntries); 0 for kNone or an unlimited budget (budget_bytes <= 0).
double BudgetBuys(int64_t budget_bytes, const AdapterLayout& layout, const std::string& compressor,
                  const CompressorOptions& options);

/// The learner's bytes per modelled byte under "directions" for a rank-based compressor: the
/// learner's DirectionBytesPerRound over the modelled adapter's. 1 for other compressors.
double DirectionsTransferRatio(const AdapterLayout& learner, const AdapterLayout& modelled,
                               const std::string& compressor, const CompressorOptions& options);

/// True when the two sides differ by more than `factor` (either way): the quality column then
/// describes another regime than the bytes column. False when either side buys nothing.
bool PurchaseDiffers(const BudgetPurchase& p, double factor);

} // namespace hilo

#endif // HILO_COMPRESS_BUDGET_REGIME_H

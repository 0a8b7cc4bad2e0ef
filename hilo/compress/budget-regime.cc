#include "hilo/compress/budget-regime.h"

#include "hilo/compress/factor-coding.h"
#include "hilo/core/value-dtype.h"

#include <cmath>
#include <cstdlib>

namespace hilo
{
namespace
{

// The option's value dtype, or `def` when unset or unreadable (the compressor's own option
// reader has already rejected a bad one by the time a run reports its regime).
ValueDtype
DtypeOption(const CompressorOptions& options, ValueDtype def)
{
    auto it = options.find("dtype");
    if (it == options.end())
        return def;
    auto parsed = ParseValueDtype(it->second);
    return parsed.ok() ? *parsed : def;
}

int64_t
IntOption(const CompressorOptions& options, const char* key, int64_t def)
{
    auto it = options.find(key);
    if (it == options.end())
        return def;
    char* end = nullptr;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    return end != nullptr && *end == '\0' ? static_cast<int64_t>(v) : def;
}

// sparq's low-bit vector of n values (hilo/compress/sparq.h): one fp32 scale per block (one per
// vector when block is 0), then ceil(n b / 8) bytes of codes.
int64_t
SparqVectorBytes(int64_t n, int64_t bits, int64_t block)
{
    const int64_t scales = block > 0 ? (n + block - 1) / block : 1;
    return 4 * scales + (n * bits + 7) / 8;
}

} // namespace

BudgetUnit
CompressorBudgetUnit(const std::string& compressor)
{
    if (compressor == "spar" || compressor == "sparq" || compressor == "powersgd")
        return BudgetUnit::kDirections;
    if (compressor == "topk" || compressor == "randk" || compressor == "quant")
        return BudgetUnit::kEntries;
    return BudgetUnit::kNone;
}

double
DirectionBytesPerRound(const AdapterLayout& layout, const std::string& compressor,
                       const CompressorOptions& options)
{
    double total = 0;
    const ValueDtype dtype = DtypeOption(options, ValueDtype::kBf16);
    const int64_t bits = IntOption(options, "bits", 4);
    const int64_t block = IntOption(options, "block", 0);
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& m = layout.matrix(i);
        if (compressor == "sparq")
            total += static_cast<double>(SparqVectorBytes(m.rows, bits, block) +
                                         SparqVectorBytes(m.cols, bits, block));
        else // spar ships sigma as f32 beside its two vectors; powersgd two vectors
            total += static_cast<double>((compressor == "spar" ? 4 : 0) +
                                         CodedVectorBytes(m.rows, dtype) +
                                         CodedVectorBytes(m.cols, dtype));
    }
    return total;
}

double
EntryValueBytes(const std::string& compressor, const CompressorOptions& options)
{
    if (compressor == "quant")
    {
        // int8 absmax or b-bit levels: about one byte or log2(levels) bits an entry.
        auto scheme = options.find("scheme");
        if (scheme != options.end() && scheme->second != "int8")
        {
            const double levels = static_cast<double>(IntOption(options, "levels", 16));
            return std::max(1.0, std::ceil(std::log2(2 * levels + 1))) / 8.0;
        }
        return 1.0;
    }
    return BytesPerValue(DtypeOption(options, ValueDtype::kBf16));
}

double
BudgetBuys(int64_t budget_bytes, const AdapterLayout& layout, const std::string& compressor,
           const CompressorOptions& options)
{
    if (budget_bytes <= 0 || layout.size() == 0)
        return 0;
    switch (CompressorBudgetUnit(compressor))
    {
        case BudgetUnit::kDirections:
            return static_cast<double>(budget_bytes) /
                   DirectionBytesPerRound(layout, compressor, options);
        case BudgetUnit::kEntries:
            return std::min(1.0, static_cast<double>(budget_bytes) /
                                     (static_cast<double>(layout.numel()) *
                                      EntryValueBytes(compressor, options)));
        case BudgetUnit::kNone:
            break;
    }
    return 0;
}

double
DirectionsTransferRatio(const AdapterLayout& learner, const AdapterLayout& modelled,
                        const std::string& compressor, const CompressorOptions& options)
{
    if (CompressorBudgetUnit(compressor) != BudgetUnit::kDirections || modelled.size() == 0)
        return 1.0;
    return DirectionBytesPerRound(learner, compressor, options) /
           DirectionBytesPerRound(modelled, compressor, options);
}

bool
PurchaseDiffers(const BudgetPurchase& p, double factor)
{
    if (p.unit == BudgetUnit::kNone || p.modelled <= 0 || p.learner <= 0)
        return false;
    return p.modelled > factor * p.learner || p.learner > factor * p.modelled;
}

} // namespace hilo

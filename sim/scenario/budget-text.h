// The budget text of an arm ("1.6%", "64KiB", "" = unlimited) as a hilo::Budget. Sizes use the
// byte units of sim/net/units.h (B, kB/KB, MB, GB, TB, KiB, MiB, GiB, TiB).
#ifndef HILOSIM_SCENARIO_BUDGET_TEXT_H
#define HILOSIM_SCENARIO_BUDGET_TEXT_H

#include "hilo/compress/budget.h"
#include "hilo/core/status.h"

#include <string>

namespace hilosim
{

/// "" or "unlimited" -> unlimited; "1.6%" -> a fraction 0.016 of the adapter's bytes, in
/// (0, 100]%; otherwise a positive byte size ("64KiB", "4096B", "2MB"). Errors say what is allowed.
hilo::StatusOr<hilo::Budget> ParseBudget(const std::string& text);

} // namespace hilosim

#endif // HILOSIM_SCENARIO_BUDGET_TEXT_H

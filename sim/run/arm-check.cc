#include "sim/run/arm-check.h"

#include "hilo/compress/budget-regime.h"
#include "sim/run/arm-context-builder.h"

#include <iomanip>
#include <sstream>

namespace hilosim
{
namespace
{

std::string
RegimeWarning(const ResolvedArm& arm, const hilo::BudgetPurchase& p)
{
    const bool directions = p.unit == hilo::BudgetUnit::kDirections;
    const double ratio = p.modelled / p.learner;
    std::ostringstream o;
    o << std::setprecision(3) << "its budget " << arm.budget_text << " buys the modelled adapter "
      << p.modelled << (directions ? " rank-1 directions per factor matrix" : " of its entries")
      << " but the learner's " << arm.sync.compressor << " " << p.learner << " ("
      << (ratio > 1 ? ratio : 1 / ratio) << "x " << (ratio > 1 ? "fewer" : "more")
      << "): its quality describes another regime than its wire bytes";
    if (directions)
        o << "; budget_transfer: \"directions\" gives the learner the modelled directions";
    return o.str();
}

} // namespace

hilo::Status
CheckArm(const ResolvedScenario& sc, size_t arm_index, std::vector<std::string>* warnings)
{
    const ResolvedArm& arm = sc.arms.at(arm_index);
    auto context = BuildArmContext(sc, arm);
    if (!context.ok())
    {
        return hilo::Status(context.status().code(),
                            "arm '" + arm.name + "': " + context.status().message());
    }
    const hilo::BudgetPurchase purchase = ArmBudgetPurchase(sc, arm, **context);
    if (warnings != nullptr && hilo::PurchaseDiffers(purchase, kRegimeWarnFactor))
        warnings->push_back("arm '" + arm.name + "': " + RegimeWarning(arm, purchase));
    return hilo::Status::Ok();
}

hilo::Status
CheckScenarioArms(const LoadedScenario& loaded, std::vector<std::string>* warnings)
{
    std::vector<std::string> found;
    for (size_t i = 0; i < loaded.resolved.arms.size(); ++i)
    {
        hilo::Status s = CheckArm(loaded.resolved, i, &found);
        if (!s.ok())
        {
            return hilo::Status(s.code(),
                                loaded.path + ": arms[" + std::to_string(i) + "] " + s.message());
        }
    }
    if (warnings != nullptr)
        for (const std::string& w : found)
            warnings->push_back(loaded.path + ": " + w);
    return hilo::Status::Ok();
}

} // namespace hilosim

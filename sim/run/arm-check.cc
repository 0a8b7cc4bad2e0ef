#include "sim/run/arm-check.h"

#include "sim/run/arm-context-builder.h"

namespace hilosim
{

hilo::Status
CheckArm(const ResolvedScenario& sc, size_t arm_index)
{
    const ResolvedArm& arm = sc.arms.at(arm_index);
    auto context = BuildArmContext(sc, arm);
    if (!context.ok())
    {
        return hilo::Status(context.status().code(),
                            "arm '" + arm.name + "': " + context.status().message());
    }
    return hilo::Status::Ok();
}

hilo::Status
CheckScenarioArms(const LoadedScenario& loaded)
{
    for (size_t i = 0; i < loaded.resolved.arms.size(); ++i)
    {
        hilo::Status s = CheckArm(loaded.resolved, i);
        if (!s.ok())
        {
            return hilo::Status(s.code(),
                                loaded.path + ": arms[" + std::to_string(i) + "] " + s.message());
        }
    }
    return hilo::Status::Ok();
}

} // namespace hilosim

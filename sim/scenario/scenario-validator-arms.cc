// arms: names, strategies, compressors with their options, budgets and error feedback.
#include "sim/scenario/scenario-checker.h"

#include "sim/scenario/budget-text.h"

#include "hilo/compress/compressor-factory.h"
#include "hilo/core/adapter-layout.h"

#include <map>

namespace hilosim
{
namespace scenario_check
{

namespace
{

const std::vector<std::string> kStrategies = {"full", "hilo", "delta", "primal"};

} // namespace

void
Checker::CheckCompressor(const Node& an, const Arm& arm, uint32_t rank, uint32_t d_model)
{
    std::vector<std::string> known;
    for (const hilo::CompressorInfo& info : hilo::ListCompressors())
        known.push_back(info.kind);
    if (!Choice(an, "compressor", arm.compressor(), known, "compressor"))
        return;
    // A small layout shaped like one adapted matrix of the workload: enough for the factory to
    // check the options with its strict reader. Budgets are checked at run time, on the real one.
    const int64_t r = rank > 0 ? rank : 8;
    const int64_t d = d_model > 0 ? d_model : 64;
    auto layout = hilo::AdapterLayout::Create({{"probe.lora_A", r, d}, {"probe.lora_B", d, r}});
    if (!layout.ok())
        return;
    // Keys in the order of the file (the map's reflection view keeps parse order).
    const FieldDescriptor* options_fd = arm.GetDescriptor()->FindFieldByName("options");
    const Reflection* refl = arm.GetReflection();
    std::vector<std::string> keys;
    for (int i = 0; i < refl->FieldSize(arm, options_fd); ++i)
    {
        const Message& e = refl->GetRepeatedMessage(arm, options_fd, i);
        keys.push_back(e.GetReflection()->GetString(e, e.GetDescriptor()->map_key()));
    }
    const hilo::CompressorOptions options(arm.options().begin(), arm.options().end());
    auto c = hilo::NewCompressor(arm.compressor(), *layout, options);
    if (c.ok())
    {
        // Spar's and sparq's options that act through the replayed optimizer and its error
        // feedback (hilo/compress/allocation-policy.h) need the hilo strategy.
        for (size_t i = 0; i < keys.size(); ++i)
        {
            const std::string& value = options.at(keys[i]);
            std::string why;
            if (keys[i] == "allocation" && value == "preconditioned" && arm.strategy() != "hilo")
                why = "allocation \"preconditioned\" weighs each direction by the second moment "
                      "the replicas replay Adam with; it needs strategy \"hilo\"";
            const bool ef_off =
                arm.error_feedback().has_enabled() && !arm.error_feedback().enabled();
            if (keys[i] == "ef_max_ratio" && (arm.strategy() != "hilo" || ef_off))
                why = "ef_max_ratio bounds the hilo strategy's error-feedback residual; it needs "
                      "strategy \"hilo\" with error feedback on";
            if (!why.empty())
            {
                auto [line, column] = an.Location("options", static_cast<int>(i));
                Report(an.PathOf("options") + "." + keys[i], line, column,
                       why + " (got strategy \"" + arm.strategy() + "\"" +
                           (ef_off ? ", error_feedback.enabled false" : "") + ")");
            }
        }
        return;
    }
    for (size_t i = 0; i < keys.size(); ++i)
    {
        if (c.status().message().find("'" + keys[i] + "'") != std::string::npos)
        {
            auto [line, column] = an.Location("options", static_cast<int>(i));
            Report(an.PathOf("options") + "." + keys[i], line, column, c.status().message());
            return;
        }
    }
    Error(an, keys.empty() ? "compressor" : "options", c.status().message());
}

void
Checker::CheckArms(const Node& root, const Scenario& s, const ResolvedWorkload& workload,
                   std::vector<ResolvedArm>* out)
{
    if (s.arms_size() == 0)
    {
        Error(root, "arms",
              "no arms: add at least one arms { name: \"...\" strategy: \"full|hilo|delta|primal\" "
              "}");
        return;
    }
    std::map<std::string, int> seen;
    for (int i = 0; i < s.arms_size(); ++i)
    {
        const Arm& arm = s.arms(i);
        const Node an = root.Child("arms", i);
        bool ok = Identifier(an, "name", -1, arm.name());
        if (ok && !seen.emplace(arm.name(), i).second)
        {
            const int first = seen[arm.name()];
            Error(an, "name",
                  "duplicate arm name \"" + arm.name() + "\" (first used by arms[" +
                      std::to_string(first) + "], line " +
                      std::to_string(root.Child("arms", first).line()) +
                      "); arm names must be unique");
            ok = false;
        }
        ok &= Choice(an, "strategy", arm.strategy(), kStrategies, "strategy");
        ok &= IntIn(an, "training_rank", arm.training_rank(), 0, 4096);
        const uint32_t rank = arm.training_rank() > 0 ? static_cast<uint32_t>(arm.training_rank())
                                                      : workload.lora_rank;
        const size_t before = m_diagnostics->items().size();
        CheckCompressor(an, arm, rank, workload.model.d_model);
        ok &= m_diagnostics->items().size() == before;
        const bool full = arm.strategy() == "full";
        if (full && arm.compressor() != "dense")
        {
            Error(an, "compressor",
                  "strategy \"full\" ships the parameters uncompressed; compressor must be "
                  "\"dense\" (options { key: \"dtype\" value: \"bf16\" } or fp32), got \"" +
                      arm.compressor() + "\"");
            ok = false;
        }
        auto budget = ParseBudget(arm.budget());
        if (!budget.ok())
        {
            Error(an, "budget", budget.status().message());
            ok = false;
        }
        else if (full && !budget->unlimited())
        {
            Error(an, "budget",
                  "strategy \"full\" always ships the whole adapter; budget must be empty (got \"" +
                      arm.budget() + "\")");
            ok = false;
        }
        const Node ef = an.Child("error_feedback");
        if (full && arm.error_feedback().enabled())
        {
            Error(ef, "enabled",
                  "strategy \"full\" has no error feedback; allowed: false (or leave it out)");
            ok = false;
        }
        ok &= DoubleIn(ef, "decay", arm.error_feedback().decay(), 0, true, 1, false);
        if (!ok)
            continue;
        ResolvedArm ra;
        ra.name = arm.name();
        ra.sync.kind = *hilo::ParseSyncKind(arm.strategy());
        ra.sync.compressor = arm.compressor();
        ra.sync.compressor_options =
            hilo::CompressorOptions(arm.options().begin(), arm.options().end());
        ra.sync.budget = *budget;
        ra.sync.error_feedback.enabled = arm.error_feedback().enabled();
        ra.sync.error_feedback.decay = static_cast<float>(arm.error_feedback().decay());
        ra.budget_text = arm.budget().empty() ? "unlimited" : arm.budget();
        if (!budget->unlimited() && arm.budget().back() != '%')
        {
            ra.budget_wire_bytes = static_cast<uint64_t>(budget->ResolveBytes(0)); // a size
        }
        ra.training_rank = rank;
        out->push_back(std::move(ra));
    }
}

} // namespace scenario_check
} // namespace hilosim

#include "sim/cli/catalog.h"

namespace hilosim
{

std::vector<std::pair<std::string, std::string>>
KnownNetworkModels()
{
    return {
        {"packet",
         "ns-3 TCP segment by segment (default). Queues, drop-tail and random loss, congestion "
         "control dynamics and their tails are simulated, not modelled. Cost grows with the "
         "packets and the windows in flight: minutes for full-adapter sync of a 7B model to a "
         "handful of workers, hours beyond. Choose it for lossy or contended links, tail "
         "latencies, and to check a flow-model result."},
        {"flow",
         "Each message a flow on the same routes: max-min fair rates re-shared whenever a flow "
         "starts or ends, TCP handshake, slow start, window limit, header overhead, and "
         "random loss as expected loss events, each cutting the window by the variant's beta "
         "and CUBIC's curve growing it between them. Seconds instead of minutes, whatever "
         "the bytes; within 5% of "
         "packet on update-latency p50 for clean links and moderate sharing "
         "(results/sim/flow-vs-packet.md). Choose it for scale (many workers, large adapters, "
         "fast links) and sweeps; it smooths tails and random loss into expectations."},
    };
}

std::vector<std::pair<std::string, std::string>>
KnownStrategies()
{
    return {
        {"full", "the whole adapter every version (compressor dense); workers load it"},
        {"hilo",
         "the compressed gradient; workers replay the optimizer step on the decoded gradient and "
         "hold the learner's adapter and optimizer state bit for bit (the paper's scheme)"},
        {"delta",
         "the compressed parameter delta, with optional error feedback; workers hold a copy "
         "that drifts from the parameters the learner trains (drift is reported)"},
        {"primal",
         "primal error feedback (EF21-P): a shared adapter moves by a compressed step towards "
         "the learner's master copy; gradients, rollouts and evaluation all use the shared "
         "adapter, which every worker holds bit for bit (no optimizer state on workers)"},
    };
}

std::vector<std::pair<std::string, std::string>>
KnownWorkloads()
{
    return {
        {"distill",
         "on-policy distillation: students sample, the learner minimizes the exact reverse "
         "KL(student || teacher); quality = that KL on held-out prompts (lower is better)"},
        {"distill teacher planted",
         "(default) seeded random base + a planted low-rank delta (teacher.delta_rank, "
         "teacher.decay), uniform random prompts; for teaching about planted structure"},
        {"distill teacher finetuned",
         "byte-level base pretrained on Debian's fortunes; teacher = that base fine-tuned with "
         "all its weights on the computing categories; prompts = held-out computing text; "
         "model shape fixed by the checkpoint (vocab 256, d_model 128, 2 layers, 4 heads, "
         "context 64)"},
        {"grpo",
         "group-relative policy gradient with a verifiable reward (PPO ratio clip, optional "
         "entropy bonus grpo.entropy_coef); quality = mean reward on held-out prompts"},
        {"grpo task residue_stride",
         "(default) y_t = y_{t-1} + s mod K with the stride s set by the first prompt token; "
         "random base; random policy scores 1/K"},
        {"grpo task residue_chain", "the same with stride 1 for every prompt"},
        {"grpo task randomwalks",
         "shortest paths to node 0 on a seeded random graph of 21 nodes (trlX's randomwalks "
         "example); base pretrained on the graph's random walks; reward = path optimality in "
         "[0, 1]; walks of gen_tokens + 1 nodes (default 10)"},
    };
}

ScenarioCatalog
CurrentCatalog()
{
    ScenarioCatalog c;
    for (const auto& [name, description] : KnownGpus())
        c.gpus.push_back(name);
    for (const auto& [name, description] : KnownLlms())
        c.llms.push_back(name);
    return c;
}

} // namespace hilosim

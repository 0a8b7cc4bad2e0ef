#include "sim/scenario/scenario-defaults.h"

#include "models/fortune-corpus.h"

namespace hilosim
{
namespace
{

// The link defaults of scenario.proto; bandwidth has none (it is required).
void
FillLinkDefaults(Link* link)
{
    if (link->delay().empty())
        link->set_delay("0ms");
    if (!link->has_loss())
        link->set_loss(0.0);
    if (!link->has_mtu())
        link->set_mtu(1500);
    if (link->queue().empty())
        link->set_queue("fifo");
    if (!link->has_queue_packets())
        link->set_queue_packets(1000);
}

void
FillWorkloadDefaults(Workload* w)
{
    ModelShape* m = w->mutable_model();
    const bool finetuned = w->kind() == "distill" && w->teacher().kind() == "finetuned";
    if (finetuned)
    {
        // The shape of the committed text base (models/fortune-corpus.h).
        if (!m->has_vocab())
            m->set_vocab(static_cast<int32_t>(models::TextBaseShape::kVocab));
        if (!m->has_d_model())
            m->set_d_model(static_cast<int32_t>(models::TextBaseShape::kDModel));
        if (!m->has_layers())
            m->set_layers(static_cast<int32_t>(models::TextBaseShape::kLayers));
        if (!m->has_heads())
            m->set_heads(static_cast<int32_t>(models::TextBaseShape::kHeads));
        if (!m->has_context())
            m->set_context(static_cast<int32_t>(models::TextBaseShape::kContext));
    }
    const bool walks = w->kind() == "grpo" && w->grpo().task() == "randomwalks";
    if (!m->has_vocab())
        m->set_vocab(64);
    if (!m->has_d_model())
        m->set_d_model(64);
    if (!m->has_layers())
        m->set_layers(2);
    if (!m->has_heads())
        m->set_heads(4);
    if (!m->has_context())
        m->set_context(64);
    Lora* lora = w->mutable_lora();
    if (!lora->has_rank())
        lora->set_rank(8);
    if (!lora->has_alpha())
        lora->set_alpha(lora->rank()); // scale alpha / rank = 1
    if (!w->has_prompts_per_worker())
        w->set_prompts_per_worker(4);
    if (!w->has_group_size())
        w->set_group_size(w->kind() == "grpo" ? 4 : 1); // GRPO needs a group to normalise over
    if (!w->has_gen_tokens())
        w->set_gen_tokens(walks ? 9 : 16);
    if (!w->has_temperature())
        w->set_temperature(1.0);
    if (w->kind() == "distill")
    {
        Teacher* t = w->mutable_teacher();
        if (t->kind().empty())
            t->set_kind("planted");
        if (t->kind() == "planted" && !t->has_delta_rank())
            t->set_delta_rank(4);
        if (t->kind() == "planted" && !t->has_decay())
            t->set_decay(0.7);
    }
    if (w->kind() == "grpo")
    {
        Grpo* g = w->mutable_grpo();
        if (g->task().empty())
            g->set_task("residue_stride");
        if (!g->has_modulus() && g->task() != "randomwalks")
            g->set_modulus(4);
        if (!g->has_entropy_coef())
            g->set_entropy_coef(0.0);
    }
    if (!w->has_eval_prompts())
        w->set_eval_prompts(64);
    if (!w->has_eval_every())
        w->set_eval_every(10);
    if (!w->has_clip_norm())
        w->set_clip_norm(1.0);
}

void
FillOptimizerDefaults(Optimizer* o)
{
    if (o->kind().empty())
        o->set_kind("adamw");
    if (!o->has_lr())
        o->set_lr(1e-3);
    if (o->schedule().empty())
        o->set_schedule("constant");
    if (!o->has_beta1())
        o->set_beta1(0.9);
    if (!o->has_beta2())
        o->set_beta2(0.999);
    if (!o->has_eps())
        o->set_eps(1e-8);
    if (!o->has_momentum())
        o->set_momentum(0.9);
}

void
FillArmDefaults(Arm* arm)
{
    if (arm->compressor().empty())
        arm->set_compressor("dense");
    ErrorFeedback* ef = arm->mutable_error_feedback();
    if (!ef->has_enabled())
        ef->set_enabled(arm->strategy() == "hilo" || arm->strategy() == "delta" ||
                        arm->strategy() == "primal");
    if (!ef->has_decay())
        ef->set_decay(1.0);
}

} // namespace

void
FillDefaults(Scenario* scenario)
{
    FillWorkloadDefaults(scenario->mutable_workload());
    FillOptimizerDefaults(scenario->mutable_optimizer());
    Network* net = scenario->mutable_network();
    if (net->topology().empty())
        net->set_topology("star");
    if (net->tcp().empty())
        net->set_tcp("cubic");
    if (net->model().empty())
        net->set_model("packet");
    if (net->tcp_buffer().empty())
        net->set_tcp_buffer("auto");
    if (!net->has_slow_start_after_idle())
        net->set_slow_start_after_idle(true);
    if (net->topology() == "relay" && net->relay_forwarding().empty())
        net->set_relay_forwarding("stream");
    FillLinkDefaults(net->mutable_worker_link());
    if (net->has_learner_uplink())
        FillLinkDefaults(net->mutable_learner_uplink());
    for (Region& region : *net->mutable_regions())
    {
        FillLinkDefaults(region.mutable_wan());
    }
    for (Arm& arm : *scenario->mutable_arms())
    {
        FillArmDefaults(&arm);
    }
    Learner* learner = scenario->mutable_learner();
    if (!learner->has_gpus())
        learner->set_gpus(1);
    if (learner->parallel().empty())
        learner->set_parallel("tp");
    for (WorkerGroup& group : *scenario->mutable_workers())
    {
        if (!group.has_gpus())
            group.set_gpus(1);
        if (group.parallel().empty())
            group.set_parallel("tp");
    }
    if (scenario->mode().max_sim_time().empty())
        scenario->mutable_mode()->set_max_sim_time("24h");
}

} // namespace hilosim

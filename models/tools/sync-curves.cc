// sync-curves: trains a workload through any sync strategy without a network, in the lockstep of
// hilo-sim's synchronous on-policy mode, and writes a learning-curve CSV with bytes per update,
// drift and hash agreement. In that mode the learning outcome does not depend on network timing,
// so this reproduces hilo-sim's quality column for the same workload, optimizer, seed and arm
// (rounds 1..steps; worker w rolls out round r with its replica at version r - 1; the learner
// differentiates at Publisher::gradient_point() over the batches in worker order; evaluation at
// the replica view at version 0, every --eval-every versions and the last).
//
//   sync-curves --kind distill --preset sim --d-model 128 --lora-rank 64 --teacher-rank 8
//       --strategy primal --compressor spar --budget 1.6% --steps 100 --out x.csv
//
// Every worker holds its own hilo::Replica fed the published frames and samples with it, so a
// replica that differs from the learner's view shows up in learning; a replica that rejects an
// update (hash mismatch) is counted and the run stops with exit code 1.
#include "hilo/build-info.h"
#include "hilo/compress/budget-regime.h"
#include "hilo/compress/compressor-options.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "models/compute-model.h"
#include "models/cpu-timer.h"
#include "models/fortune-corpus.h"
#include "models/llm-profile.h"
#include "models/lm-checkpoint.h"
#include "models/workload.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

namespace po = boost::program_options;

namespace
{

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitBadInput = 2;

// The workload hilo-sim builds for a scenario that sets only `kind` (sim/scenario defaults +
// sim/run's ToWorkloadConfig): the base of --preset sim.
models::WorkloadConfig
SimDefaultConfig(const std::string& kind)
{
    models::WorkloadConfig c;
    c.kind = kind;
    c.context = 64;
    c.lora_rank = 8;
    c.lora_alpha = 8;
    c.prompts_per_worker = 4;
    c.group_size = kind == "grpo" ? 4 : 1;
    c.teacher_delta_rank = 4;
    c.teacher_delta_decay = 0.7;
    c.eval_prompts = 64;
    return c;
}

hilo::StatusOr<hilo::Budget>
ParseBudgetFlag(const std::string& text)
{
    if (text.empty() || text == "unlimited")
    {
        return hilo::Budget::Unlimited();
    }
    try
    {
        size_t used = 0;
        if (text.back() == '%')
        {
            const double pct = std::stod(text.substr(0, text.size() - 1), &used);
            if (used == text.size() - 1 && pct > 0 && pct <= 100)
            {
                return hilo::Budget::Fraction(pct / 100.0);
            }
        }
        else
        {
            const long long bytes = std::stoll(text, &used);
            if (used == text.size() && bytes > 0)
            {
                return hilo::Budget::Bytes(bytes);
            }
        }
    }
    catch (const std::exception&)
    {
    }
    return hilo::Status::InvalidArgument("--budget: expected a percentage in (0, 100] like 1.6%, "
                                         "a byte count > 0, or unlimited; got '" +
                                         text + "'");
}

template<typename T>
void
Override(const po::variables_map& vm, const char* name, T* field)
{
    if (vm.count(name))
    {
        *field = vm[name].as<T>();
    }
}

/// The model shape a text checkpoint's `meta` records (pretrain-text writes "d_model: N",
/// "layers: N", "heads: N" lines); kInvalidArgument naming the path when it cannot be read or
/// does not say.
hilo::Status
ReadTextShape(const std::string& path, models::WorkloadConfig* config)
{
    hilo::StatusOr<models::LmCheckpoint> ckpt = models::LmCheckpoint::Read(path);
    if (!ckpt.ok())
    {
        return hilo::Status::InvalidArgument("--text-checkpoint: " + ckpt.status().message());
    }
    auto meta = ckpt->blobs.find("meta");
    if (meta == ckpt->blobs.end())
    {
        return hilo::Status::InvalidArgument("--text-checkpoint " + path + ": no meta entry");
    }
    std::istringstream lines(meta->second);
    std::string line;
    int found = 0;
    while (std::getline(lines, line))
    {
        for (auto [key, field] :
             {std::pair{"d_model: ", &config->d_model}, std::pair{"layers: ", &config->layers},
              std::pair{"heads: ", &config->heads}})
        {
            if (line.rfind(key, 0) == 0)
            {
                const char* begin = line.data() + std::strlen(key);
                const char* end = line.data() + line.size();
                auto [ptr, ec] = std::from_chars(begin, end, *field);
                if (ec != std::errc() || ptr != end)
                {
                    return hilo::Status::InvalidArgument("--text-checkpoint " + path +
                                                         ": bad meta line '" + line + "'");
                }
                ++found;
            }
        }
    }
    if (found != 3)
    {
        return hilo::Status::InvalidArgument("--text-checkpoint " + path +
                                             ": meta does not name d_model, layers and heads");
    }
    config->text_checkpoint = path;
    return hilo::Status::Ok();
}

} // namespace

int
main(int argc, char** argv)
{
    std::string kind;
    std::string preset;
    std::string out;
    std::string strategy;
    std::string compressor;
    std::string options_text;
    std::string budget_text;
    std::string schedule;
    int64_t steps = 100;
    int64_t workers = 2;
    int64_t eval_every = 10;
    double lr = 2e-3;
    int64_t warmup = 0;
    int64_t v_freeze_step = 0;
    double min_lr_ratio = 0;
    double weight_decay = 0;
    uint64_t seed = 1;
    bool ef = true;
    double ef_decay = 1.0;
    bool eval_master = false;
    std::string dump_dir;
    std::string llm_profile;
    int64_t modelled_rank = 0;
    std::string budget_transfer;
    po::options_description desc("sync-curves options");
    // clang-format off
    desc.add_options()
        ("help", "this text")
        ("version", "print the commit and build type")
        ("kind", po::value(&kind)->default_value("distill"), "distill | grpo")
        ("preset", po::value(&preset)->default_value("sim"),
         "sim (hilo-sim's scenario defaults) | default (models::WorkloadConfig) | paper")
        ("seed", po::value(&seed)->default_value(1), "scenario seed")
        ("steps", po::value(&steps)->default_value(100), "versions to publish")
        ("workers", po::value(&workers)->default_value(2), "rollout workers, one replica each")
        ("eval-every", po::value(&eval_every)->default_value(10), "versions between evaluations")
        ("eval-master", po::bool_switch(&eval_master),
         "also evaluate the optimizer's parameters when replicas hold others (primal's master, "
         "delta's and full-bf16's learner)")
        ("strategy", po::value(&strategy)->default_value("full"), "full | hilo | delta | primal")
        ("compressor", po::value(&compressor)->default_value("dense"), "compressor kind")
        ("options", po::value(&options_text)->default_value(""),
         "compressor options, \"key=value;key=value\"")
        ("budget", po::value(&budget_text)->default_value(""),
         "per update: 1.6% of the adapter's bytes, a byte count, or unlimited (empty)")
        ("llm-profile", po::value(&llm_profile)->default_value(""),
         "the modelled LLM whose LoRA adapter a percentage --budget is a fraction of "
         "(`hilo-sim list models`); empty: the learner's own adapter")
        ("modelled-rank", po::value(&modelled_rank)->default_value(0),
         "LoRA rank of the modelled adapter (0: the learner's rank)")
        ("budget-transfer", po::value(&budget_transfer)->default_value("fraction"),
         "with --llm-profile: fraction (the learner gets the same fraction of its own adapter) | "
         "directions (a rank-based compressor gets the budget that buys the modelled rank-1 "
         "directions per factor matrix; entry-based ones keep the fraction)")
        ("error-feedback", po::value(&ef)->default_value(true),
         "learner-side error feedback of hilo, delta and primal (ignored by full)")
        ("ef-decay", po::value(&ef_decay)->default_value(1.0), "error-feedback decay")
        ("lr", po::value(&lr)->default_value(2e-3), "AdamW peak learning rate")
        ("schedule", po::value(&schedule)->default_value("constant"),
         "constant | linear_warmup | cosine")
        ("warmup", po::value(&warmup)->default_value(0), "warmup steps")
        ("min-lr-ratio", po::value(&min_lr_ratio)->default_value(0), "cosine floor")
        ("weight-decay", po::value(&weight_decay)->default_value(0), "AdamW decoupled decay")
        ("v-freeze-step", po::value(&v_freeze_step)->default_value(0),
         "AdamW: the second moment stops changing after this many steps (1-bit Adam's frozen "
         "variance; 0 = never)")
        ("vocab", po::value<int64_t>(), "workload field (default: the preset's)")
        ("d-model", po::value<int64_t>(), "workload field")
        ("layers", po::value<int64_t>(), "workload field")
        ("heads", po::value<int64_t>(), "workload field")
        ("context", po::value<int64_t>(), "workload field")
        ("lora-rank", po::value<int64_t>(), "workload field (alpha follows unless set)")
        ("lora-alpha", po::value<double>(), "workload field")
        ("prompts-per-worker", po::value<int64_t>(), "workload field")
        ("group-size", po::value<int64_t>(), "workload field")
        ("gen-tokens", po::value<int64_t>(), "workload field")
        ("temperature", po::value<double>(), "workload field")
        ("teacher", po::value<std::string>(),
         "distill: planted | finetuned (the text base's full fine-tune; the model shape "
         "defaults to the checkpoint's)")
        ("text-checkpoint", po::value<std::string>(),
         "distill finetuned: the text checkpoint (pretrain-text --out; default: the committed "
         "models/data/fortunes-lm.bin); the model shape defaults to the one its meta records")
        ("grpo-task", po::value<std::string>(),
         "grpo: residue | randomwalks (prompt of 1 token, gen-tokens defaults to 9)")
        ("prompt-tokens", po::value<int64_t>(), "workload field")
        ("walk-pretrain-steps", po::value<int64_t>(), "grpo randomwalks: base pretraining steps")
        ("teacher-rank", po::value<int64_t>(), "distill: teacher delta rank")
        ("teacher-decay", po::value<double>(), "distill: teacher delta decay")
        ("teacher-scale", po::value<double>(), "distill: teacher delta scale")
        ("task-modulus", po::value<int64_t>(), "grpo: K")
        ("task-prompt-stride", po::value<bool>(), "grpo: stride from the first prompt token")
        ("entropy-coef", po::value<double>(), "grpo: entropy bonus")
        ("eval-prompts", po::value<int64_t>(), "held-out prompts")
        ("clip-norm", po::value<double>(), "global gradient-norm clip (0: none)")
        ("dump-dir", po::value(&dump_dir),
         "also write, for every version v, DIR/g<v>.bin (the gradient of that step), DIR/w<v>.bin "
         "(the replicas' parameters) and, when they differ, DIR/x<v>.bin (the optimizer's "
         "parameters): fp32, layout order (scripts/quality_subspace.py reads them)")
        ("out", po::value(&out), "CSV path (default: stdout)");
    // clang-format on
    po::variables_map vm;
    try
    {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    }
    catch (const po::error& e)
    {
        std::cerr << "sync-curves: " << e.what() << "\n" << desc;
        return kExitBadInput;
    }
    if (vm.count("help"))
    {
        std::cout << desc;
        return kExitOk;
    }
    if (vm.count("version"))
    {
        std::cout << hilo::VersionLine("sync-curves") << "\n";
        return kExitOk;
    }
    auto bad = [&](const std::string& what)
    {
        std::cerr << "sync-curves: " << what << "\n";
        return kExitBadInput;
    };
    if (preset != "sim" && preset != "default" && preset != "paper")
    {
        return bad("--preset must be sim, default or paper; got '" + preset + "'");
    }
    if (steps < 1 || workers < 1 || eval_every < 1)
    {
        return bad("--steps, --workers and --eval-every must be >= 1");
    }

    models::WorkloadConfig config = preset == "sim"     ? SimDefaultConfig(kind)
                                    : preset == "paper" ? models::PaperWorkloadConfig(kind)
                                                        : models::WorkloadConfig();
    config.kind = kind;
    config.seed = seed;
    Override(vm, "teacher", &config.teacher_kind);
    Override(vm, "grpo-task", &config.grpo_task);
    if (config.kind == "distill" && config.teacher_kind == "finetuned")
    {
        // The scenario defaults of the finetuned teacher: the checkpoint's shape.
        config.vocab = models::TextBaseShape::kVocab;
        config.d_model = models::TextBaseShape::kDModel;
        config.layers = models::TextBaseShape::kLayers;
        config.heads = models::TextBaseShape::kHeads;
        config.context = models::TextBaseShape::kContext;
        if (vm.count("text-checkpoint"))
        {
            hilo::Status shape = ReadTextShape(vm["text-checkpoint"].as<std::string>(), &config);
            if (!shape.ok())
            {
                return bad(shape.message());
            }
        }
    }
    else if (vm.count("text-checkpoint"))
    {
        return bad("--text-checkpoint needs --kind distill --teacher finetuned");
    }
    if (config.kind == "grpo" && config.grpo_task == "randomwalks")
    {
        config.prompt_tokens = 1; // the start node
        config.gen_tokens = 9;    // walks of 10 nodes, as in trlX (the scenario default)
    }
    Override(vm, "prompt-tokens", &config.prompt_tokens);
    Override(vm, "walk-pretrain-steps", &config.walk_pretrain_steps);
    Override(vm, "vocab", &config.vocab);
    Override(vm, "d-model", &config.d_model);
    Override(vm, "layers", &config.layers);
    Override(vm, "heads", &config.heads);
    Override(vm, "context", &config.context);
    if (vm.count("lora-rank"))
    {
        config.lora_rank = vm["lora-rank"].as<int64_t>();
        if (preset == "sim")
        {
            config.lora_alpha = static_cast<double>(config.lora_rank); // the scenario default
        }
    }
    Override(vm, "lora-alpha", &config.lora_alpha);
    Override(vm, "prompts-per-worker", &config.prompts_per_worker);
    Override(vm, "group-size", &config.group_size);
    Override(vm, "gen-tokens", &config.gen_tokens);
    Override(vm, "temperature", &config.temperature);
    Override(vm, "teacher-rank", &config.teacher_delta_rank);
    Override(vm, "teacher-decay", &config.teacher_delta_decay);
    Override(vm, "teacher-scale", &config.teacher_delta_scale);
    Override(vm, "task-modulus", &config.task_modulus);
    Override(vm, "task-prompt-stride", &config.task_prompt_stride);
    Override(vm, "entropy-coef", &config.entropy_coef);
    Override(vm, "eval-prompts", &config.eval_prompts);
    Override(vm, "clip-norm", &config.grad_clip_norm);

    hilo::OptimizerConfig optimizer;
    optimizer.lr.base_lr = static_cast<float>(lr);
    optimizer.lr.warmup_steps = warmup;
    optimizer.lr.total_steps = steps;
    optimizer.lr.min_lr_ratio = static_cast<float>(min_lr_ratio);
    optimizer.weight_decay = static_cast<float>(weight_decay);
    optimizer.v_freeze_step = v_freeze_step;
    auto schedule_kind = hilo::ParseLrScheduleKind(schedule);
    if (!schedule_kind.ok())
    {
        return bad("--schedule: " + schedule_kind.status().message());
    }
    optimizer.lr.kind = *schedule_kind;

    hilo::SyncSpec spec;
    auto sync_kind = hilo::ParseSyncKind(strategy);
    if (!sync_kind.ok())
    {
        return bad("--strategy: " + sync_kind.status().message());
    }
    spec.kind = *sync_kind;
    spec.compressor = compressor;
    auto options = hilo::ParseCompressorOptions(options_text);
    if (!options.ok())
    {
        return bad("--options: " + options.status().message());
    }
    spec.compressor_options = *options;
    auto budget = ParseBudgetFlag(budget_text);
    if (!budget.ok())
    {
        return bad(budget.status().message());
    }
    spec.budget = *budget;
    const bool uses_ef = spec.kind != hilo::SyncKind::kFull;
    spec.error_feedback = hilo::ErrorFeedbackOptions{uses_ef && ef, static_cast<float>(ef_decay)};

    auto workload = models::Workload::Create(config);
    if (!workload.ok())
    {
        return bad(workload.status().ToString());
    }
    models::Workload& wl = **workload;
    // The modelled adapter a percentage budget is a fraction of, and what the budget buys on it
    // and on the learner (hilo/compress/budget-regime.h).
    if (budget_transfer != "fraction" && budget_transfer != "directions")
    {
        return bad("--budget-transfer must be fraction or directions; got '" + budget_transfer +
                   "'");
    }
    if ((budget_transfer == "directions" || modelled_rank != 0) && llm_profile.empty())
    {
        return bad("--budget-transfer directions and --modelled-rank need --llm-profile");
    }
    hilo::AdapterLayout modelled = wl.layout();
    if (!llm_profile.empty())
    {
        auto llm = models::FindLlm(llm_profile);
        if (!llm.ok())
        {
            return bad("--llm-profile: " + llm.status().message());
        }
        auto layout = llm->LoraLayout(modelled_rank > 0 ? modelled_rank : config.lora_rank,
                                      models::ComputeOptions().targets);
        if (!layout.ok())
        {
            return bad("--modelled-rank: " + layout.status().message());
        }
        modelled = *layout;
    }
    const int64_t modelled_budget =
        spec.budget.unlimited() ? 0 : spec.budget.ResolveBytes(modelled.adapter_bytes());
    if (!llm_profile.empty() && !spec.budget.unlimited())
    {
        // Only a rank-based compressor gets the directions' budget; an entry-based one keeps the
        // fraction, which buys both adapters the same entry fraction.
        const bool directions =
            budget_transfer == "directions" &&
            hilo::CompressorBudgetUnit(compressor) == hilo::BudgetUnit::kDirections;
        const double ratio =
            directions ? hilo::DirectionsTransferRatio(wl.layout(), modelled, compressor, *options)
                       : static_cast<double>(wl.layout().adapter_bytes()) /
                             static_cast<double>(modelled.adapter_bytes());
        spec.budget = hilo::Budget::Bytes(std::max<int64_t>(
            1, static_cast<int64_t>(std::floor(static_cast<double>(modelled_budget) * ratio))));
    }
    const double buys_modelled = hilo::BudgetBuys(modelled_budget, modelled, compressor, *options);
    const double buys_learner =
        spec.budget.unlimited()
            ? 0
            : hilo::BudgetBuys(spec.budget.ResolveBytes(wl.layout().adapter_bytes()), wl.layout(),
                               compressor, *options);
    const hilo::AdapterState initial = wl.InitialAdapter();
    auto publisher = hilo::Publisher::Create(spec, wl.layout(), optimizer, initial);
    if (!publisher.ok())
    {
        return bad(publisher.status().ToString());
    }
    hilo::Publisher& pub = **publisher;
    std::vector<std::unique_ptr<hilo::Replica>> replicas;
    for (int64_t w = 0; w < workers; ++w)
    {
        auto r = hilo::Replica::Create(spec, wl.layout(), optimizer, initial);
        if (!r.ok())
        {
            return bad(r.status().ToString());
        }
        replicas.push_back(std::move(*r));
    }

    std::ofstream file;
    if (!out.empty())
    {
        file.open(out);
        if (!file)
        {
            std::cerr << "sync-curves: cannot write " << out << "\n";
            return kExitRuntime;
        }
    }
    std::ostream& csv = out.empty() ? std::cout : file;
    const int64_t adapter_bytes = wl.layout().adapter_bytes();
    csv << "# command:";
    for (int i = 0; i < argc; ++i)
    {
        csv << " " << argv[i];
    }
    csv << "\n# adapter_params=" << wl.layout().numel() << " adapter_bytes=" << adapter_bytes
        << " budget_bytes="
        << (spec.budget.unlimited() ? -1 : spec.budget.ResolveBytes(adapter_bytes))
        << " compressor=" << pub.strategy().compressor().Name()
        << " params=" << pub.strategy().compressor().Params() << "\n";
    // What the budget buys: directions per factor matrix (rank-based) or the entry fraction.
    csv << "# modelled=" << (llm_profile.empty() ? "learner" : llm_profile)
        << " modelled_adapter_bytes=" << modelled.adapter_bytes()
        << " budget_transfer=" << budget_transfer << " buys_unit="
        << (hilo::CompressorBudgetUnit(compressor) == hilo::BudgetUnit::kDirections ? "directions"
            : hilo::CompressorBudgetUnit(compressor) == hilo::BudgetUnit::kEntries  ? "entries"
                                                                                    : "none")
        << " buys_modelled=" << buys_modelled << " buys_learner=" << buys_learner << "\n";
    csv << "kind,strategy,compressor,budget,seed,version,metric,quality,gap_closed,"
           "master_quality,loss,grad_norm,payload_bytes,frame_bytes,fraction_of_adapter_bytes,"
           "drift_rel_l2,drift_max_abs,master_gap_rel_l2,replicas_in_sync,gradient_at_replica_view,"
           "encode_s,decode_s,apply_s,step_cpu_s\n";

    // The optimizer's own parameters when they are not what replicas hold: primal's master, or
    // the learner's trained parameters under full-bf16 and delta.
    auto trained = [&]() -> const hilo::AdapterState& {
        return pub.master_state() != nullptr ? pub.master_state()->adapter
                                             : pub.train_state().adapter;
    };
    const bool differ_view = spec.kind != hilo::SyncKind::kHilo;
    auto evaluate = [&](std::string* q, std::string* gap, std::string* master)
    {
        models::Evaluation e = wl.EvaluateAll(pub.replica_view().adapter.theta);
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.9g", e.quality);
        *q = buf;
        gap->clear();
        for (const auto& [name, value] : e.extra)
        {
            if (name == "gap_closed")
            {
                std::snprintf(buf, sizeof(buf), "%.9g", value);
                *gap = buf;
            }
        }
        master->clear();
        if (eval_master && differ_view)
        {
            std::snprintf(buf, sizeof(buf), "%.9g", wl.Evaluate(trained().theta));
            *master = buf;
        }
        std::cerr << strategy << "/" << compressor << " " << budget_text << " version "
                  << pub.version() << " " << wl.QualityMetric() << "=" << *q
                  << (gap->empty() ? "" : " gap_closed=") << *gap << "\n";
    };
    auto row_prefix = [&](uint64_t version)
    {
        char buf[256];
        std::snprintf(buf, sizeof(buf), "%s,%s,%s,%s,%llu,%llu,%s,", kind.c_str(), strategy.c_str(),
                      compressor.c_str(), budget_text.empty() ? "unlimited" : budget_text.c_str(),
                      static_cast<unsigned long long>(seed),
                      static_cast<unsigned long long>(version), wl.QualityMetric().c_str());
        return std::string(buf);
    };

    std::string q, gap, master;
    evaluate(&q, &gap, &master);
    csv << row_prefix(0) << q << "," << gap << "," << master << ",,,,,,,,,1,1,,,,\n";
    uint64_t mismatches = 0;
    double bytes_sum = 0;
    for (uint64_t round = 1; round <= static_cast<uint64_t>(steps); ++round)
    {
        const models::CpuTimer step_timer;
        std::vector<std::string> batches;
        for (int64_t w = 0; w < workers; ++w)
        {
            models::RolloutInfo ri;
            auto b = wl.Rollout(replicas[w]->state().adapter.theta, round, static_cast<uint32_t>(w),
                                &ri);
            if (!b.ok())
            {
                std::cerr << "sync-curves: rollout: " << b.status().ToString() << "\n";
                return kExitRuntime;
            }
            batches.push_back(std::move(b).value());
        }
        const hilo::AdapterState& point = pub.gradient_point();
        const bool at_view = point.Hash() == pub.replica_view().adapter.Hash();
        models::GradientInfo gi;
        auto grad = wl.Gradient(point.theta, batches, &gi);
        if (!grad.ok())
        {
            std::cerr << "sync-curves: gradient: " << grad.status().ToString() << "\n";
            return kExitRuntime;
        }
        auto update = pub.Step(*grad);
        if (!update.ok())
        {
            std::cerr << "sync-curves: publish: " << update.status().ToString() << "\n";
            return kExitRuntime;
        }
        bool in_sync = true;
        for (auto& r : replicas)
        {
            hilo::Status s = r->Apply(update->frame);
            if (!s.ok())
            {
                std::cerr << "sync-curves: replica at version " << r->version() << ": "
                          << s.ToString() << "\n";
                ++mismatches;
                in_sync = false;
            }
            else if (r->state().adapter.Hash() != pub.replica_view().adapter.Hash())
            {
                ++mismatches;
                in_sync = false;
            }
        }
        const double step_cpu_s = step_timer.Seconds();
        const hilo::DriftStats drift = pub.drift();
        const double master_gap =
            hilo::ComputeDrift(trained().theta, pub.replica_view().adapter.theta).rel_l2;
        bytes_sum += static_cast<double>(update->payload_bytes);
        if (!dump_dir.empty())
        {
            auto write = [&](const char* what, const std::vector<float>& v)
            {
                std::ofstream f(dump_dir + "/" + what + std::to_string(round) + ".bin",
                                std::ios::binary);
                f.write(reinterpret_cast<const char*>(v.data()),
                        static_cast<std::streamsize>(v.size() * sizeof(float)));
                return static_cast<bool>(f);
            };
            bool ok = write("g", *grad) && write("w", pub.replica_view().adapter.theta);
            if (differ_view)
            {
                ok = ok && write("x", trained().theta);
            }
            if (!ok)
            {
                std::cerr << "sync-curves: cannot write " << dump_dir << "/\n";
                return kExitRuntime;
            }
        }
        q.clear();
        gap.clear();
        master.clear();
        if (round % static_cast<uint64_t>(eval_every) == 0 || round == static_cast<uint64_t>(steps))
        {
            evaluate(&q, &gap, &master);
        }
        char buf[512];
        std::snprintf(
            buf, sizeof(buf),
            "%s,%s,%s,%.6g,%.6g,%lld,%lld,%.6f,%.6g,%.6g,%.6g,%d,%d,%.6f,%.6f,%.6f,%.6f\n",
            q.c_str(), gap.c_str(), master.c_str(), gi.loss, gi.grad_norm,
            static_cast<long long>(update->payload_bytes),
            static_cast<long long>(update->frame.size()),
            100.0 * static_cast<double>(update->payload_bytes) / static_cast<double>(adapter_bytes),
            drift.rel_l2, drift.max_abs, master_gap, in_sync ? 1 : 0, at_view ? 1 : 0,
            update->times.encode_s, update->times.decode_s, update->times.apply_s, step_cpu_s);
        csv << row_prefix(round) << buf << std::flush;
        if (!in_sync)
        {
            std::cerr << "sync-curves: replicas left the learner's view at version " << round
                      << "\n";
            return kExitRuntime;
        }
    }
    csv << "# mean_payload_bytes=" << bytes_sum / static_cast<double>(steps)
        << " mean_fraction_pct="
        << 100.0 * bytes_sum / static_cast<double>(steps) / static_cast<double>(adapter_bytes)
        << " hash_mismatches=" << mismatches << "\n";
    if (!csv)
    {
        std::cerr << "sync-curves: write failed\n";
        return kExitRuntime;
    }
    return kExitOk;
}

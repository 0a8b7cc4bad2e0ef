// workload-curves: trains a workload under plain full-state sync (hilo Publisher with the `full`
// strategy, dense fp32; rollouts sampled from a hilo Replica) and writes a learning-curve CSV.
//
//   workload-curves --kind distill --preset default --steps 200 --out results/workloads/x.csv
#include "hilo/build-info.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "models/cpu-timer.h"
#include "models/workload.h"

#include <boost/program_options.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace po = boost::program_options;

int
main(int argc, char** argv)
{
    std::string kind;
    std::string preset;
    std::string out;
    int64_t steps = 200;
    int64_t workers = 4;
    int64_t eval_every = 10;
    double lr = 3e-3;
    uint64_t seed = 1;
    int64_t modulus = 0;
    int stride = -1;
    int64_t teacher_rank = 0;
    double teacher_scale = -1;
    double teacher_decay = -1;
    int64_t group_size = 0;
    int64_t prompts_per_worker = 0;
    double lora_alpha = 0;
    double entropy_coef = -1;
    po::options_description desc("workload-curves options");
    desc.add_options()("help", "this text")("version", "print the commit and build type")(
        "kind", po::value(&kind)->default_value("distill"), "distill | grpo")(
        "preset", po::value(&preset)->default_value("default"),
        "default | paper")("steps", po::value(&steps)->default_value(200), "optimizer steps")(
        "workers", po::value(&workers)->default_value(4), "rollout workers per step")(
        "eval-every", po::value(&eval_every)->default_value(10), "steps between evaluations")(
        "lr", po::value(&lr)->default_value(3e-3), "AdamW learning rate (constant)")(
        "seed", po::value(&seed)->default_value(1), "workload seed")(
        "task-modulus", po::value(&modulus)->default_value(0),
        "grpo K (0: preset's)")("task-prompt-stride", po::value(&stride)->default_value(-1),
                                "grpo: 1 stride from the prompt, 0 stride 1 (-1: preset's)")(
        "teacher-rank", po::value(&teacher_rank)->default_value(0), "distill (0: preset's)")(
        "teacher-scale", po::value(&teacher_scale)->default_value(-1), "distill (<0: preset's)")(
        "teacher-decay", po::value(&teacher_decay)->default_value(-1), "distill (<0: preset's)")(
        "group-size", po::value(&group_size)->default_value(0), "samples per prompt (0: preset's)")(
        "prompts-per-worker", po::value(&prompts_per_worker)->default_value(0),
        "prompts per worker and step (0: preset's)")(
        "lora-alpha", po::value(&lora_alpha)->default_value(0), "LoRA alpha (0: preset's)")(
        "entropy-coef", po::value(&entropy_coef)->default_value(-1),
        "grpo entropy bonus (<0: preset's)")("out", po::value(&out), "CSV path (default: stdout)");
    po::variables_map vm;
    try
    {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    }
    catch (const po::error& e)
    {
        std::cerr << "workload-curves: " << e.what() << "\n" << desc;
        return 2;
    }
    if (vm.count("help"))
    {
        std::cout << desc;
        return 0;
    }
    if (vm.count("version"))
    {
        std::cout << hilo::VersionLine("workload-curves") << "\n";
        return 0;
    }
    if (preset != "default" && preset != "paper")
    {
        std::cerr << "workload-curves: --preset must be default or paper\n";
        return 2;
    }
    models::WorkloadConfig config =
        preset == "paper" ? models::PaperWorkloadConfig(kind) : models::WorkloadConfig();
    config.kind = kind;
    config.seed = seed;
    if (modulus > 0)
    {
        config.task_modulus = modulus;
    }
    if (stride >= 0)
    {
        config.task_prompt_stride = stride == 1;
    }
    if (teacher_rank > 0)
    {
        config.teacher_delta_rank = teacher_rank;
    }
    if (teacher_scale >= 0)
    {
        config.teacher_delta_scale = teacher_scale;
    }
    if (teacher_decay >= 0)
    {
        config.teacher_delta_decay = teacher_decay;
    }
    if (group_size > 0)
    {
        config.group_size = group_size;
    }
    if (prompts_per_worker > 0)
    {
        config.prompts_per_worker = prompts_per_worker;
    }
    if (entropy_coef >= 0)
    {
        config.entropy_coef = entropy_coef;
    }
    if (lora_alpha > 0)
    {
        config.lora_alpha = lora_alpha;
    }
    auto workload = models::Workload::Create(config);
    if (!workload.ok())
    {
        std::cerr << "workload-curves: " << workload.status().ToString() << "\n";
        return 2;
    }
    models::Workload& wl = **workload;

    hilo::OptimizerConfig optimizer;
    optimizer.lr.base_lr = static_cast<float>(lr);
    hilo::SyncSpec spec;
    spec.kind = hilo::SyncKind::kFull;
    spec.compressor = "dense";
    spec.compressor_options = {{"dtype", "fp32"}};
    const hilo::AdapterState initial = wl.InitialAdapter();
    auto publisher = hilo::Publisher::Create(spec, wl.layout(), optimizer, initial);
    auto replica = hilo::Replica::Create(spec, wl.layout(), optimizer, initial);
    if (!publisher.ok() || !replica.ok())
    {
        std::cerr << "workload-curves: "
                  << (publisher.ok() ? replica.status() : publisher.status()).ToString() << "\n";
        return 1;
    }

    // Rows are written (and flushed) as they are made, so a long run can be watched or stopped.
    std::ofstream file;
    if (!out.empty())
    {
        file.open(out);
        if (!file)
        {
            std::cerr << "workload-curves: cannot write " << out << "\n";
            return 1;
        }
    }
    std::ostream& csv = out.empty() ? std::cout : file;
    csv << "# command:";
    for (int i = 0; i < argc; ++i)
    {
        csv << " " << argv[i];
    }
    csv << "\n# adapter_params=" << wl.layout().numel() << " lora_rank=" << config.lora_rank
        << " lora_alpha=" << config.lora_alpha << " group_size=" << config.group_size
        << " entropy_coef=" << config.entropy_coef << " d_model=" << config.d_model
        << " layers=" << config.layers << " vocab=" << config.vocab << " workers=" << workers
        << " sequences_per_worker=" << config.prompts_per_worker * config.group_size << "\n";
    csv << "kind,preset,step,metric,quality,gap_closed,loss,grad_norm,rollout_cpu_s,"
           "gradient_cpu_s,sync_cpu_s,step_cpu_s,eval_cpu_s\n";
    auto write_row = [&](int64_t step, const std::string& quality, const std::string& gap,
                         const models::GradientInfo* gi, double rollout_s, double sync_s,
                         double eval_s)
    {
        char buf[512];
        std::snprintf(buf, sizeof(buf), "%s,%s,%lld,%s,%s,%s,", kind.c_str(), preset.c_str(),
                      static_cast<long long>(step), wl.QualityMetric().c_str(), quality.c_str(),
                      gap.c_str());
        csv << buf;
        if (gi != nullptr)
        {
            std::snprintf(buf, sizeof(buf), "%.6g,%.6g,%.6f,%.6f,%.6f,%.6f,", gi->loss,
                          gi->grad_norm, rollout_s, gi->cpu_s, sync_s,
                          rollout_s + gi->cpu_s + sync_s);
            csv << buf;
        }
        else
        {
            csv << ",,,,,,";
        }
        std::snprintf(buf, sizeof(buf), "%.6f\n", eval_s);
        csv << buf << std::flush;
    };
    auto evaluate = [&](std::string* q, std::string* gap, double* eval_s)
    {
        models::CpuTimer t;
        models::Evaluation e = wl.EvaluateAll((*replica)->state().adapter.theta);
        *eval_s = t.Seconds();
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.6f", e.quality);
        *q = buf;
        gap->clear();
        for (const auto& [name, value] : e.extra)
        {
            if (name == "gap_closed")
            {
                std::snprintf(buf, sizeof(buf), "%.6f", value);
                *gap = buf;
            }
        }
        std::cerr << kind << "/" << preset << " step " << (*replica)->version() << " "
                  << wl.QualityMetric() << "=" << *q << (gap->empty() ? "" : " gap_closed=") << *gap
                  << "\n";
    };

    for (int64_t step = 0; step <= steps; ++step)
    {
        std::string q;
        std::string gap;
        double eval_s = 0;
        if (step % eval_every == 0 || step == steps || step == 50 || step == 100 || step == 200)
        {
            evaluate(&q, &gap, &eval_s);
        }
        if (step == steps)
        {
            write_row(step, q, gap, nullptr, 0, 0, eval_s);
            break;
        }
        std::vector<std::string> batches;
        double rollout_s = 0;
        for (int64_t w = 0; w < workers; ++w)
        {
            models::RolloutInfo ri;
            auto b = wl.Rollout((*replica)->state().adapter.theta, static_cast<uint64_t>(step),
                                static_cast<uint32_t>(w), &ri);
            if (!b.ok())
            {
                std::cerr << "rollout: " << b.status().ToString() << "\n";
                return 1;
            }
            rollout_s += ri.cpu_s;
            batches.push_back(std::move(b).value());
        }
        models::GradientInfo gi;
        auto grad = wl.Gradient((*publisher)->train_state().adapter.theta, batches, &gi);
        if (!grad.ok())
        {
            std::cerr << "gradient: " << grad.status().ToString() << "\n";
            return 1;
        }
        models::CpuTimer sync_timer;
        auto update = (*publisher)->Step(*grad);
        hilo::Status applied = update.ok() ? (*replica)->Apply(update->frame) : update.status();
        if (!applied.ok())
        {
            std::cerr << "sync: " << applied.ToString() << "\n";
            return 1;
        }
        write_row(step, q, gap, &gi, rollout_s, sync_timer.Seconds(), eval_s);
    }
    if (!csv)
    {
        std::cerr << "workload-curves: write failed\n";
        return 1;
    }
    return 0;
}

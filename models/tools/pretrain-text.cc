// pretrain-text: builds the real-text base of the distillation workload and its fine-tuned
// teacher from the fortune(6) files of Debian's `fortunes` package, deterministically (one thread,
// SeededRng batches, ATen AdamW), and writes them with held-out text into one checkpoint
// (models/lm-checkpoint.h) plus the per-matrix spectrum of the teacher's delta as CSV.
//
//   pretrain-text --out models/data/fortunes-lm.bin
//                 --spectrum results/quality/teacher-spectrum.csv   (one line)
//
// Corpus: every category except the teacher's domain (computers, linux, linuxcookie, perl,
// debian) and ASCII pictures (ascii-art) is the base's text; the domain is the teacher's. Every
// tenth record of each file (index mod 10 == 9) is held out of all training. Tokens are bytes.
// The base trains all weights on windows of the base text; the teacher starts from the base and
// trains all weights on the domain's text (a full-rank fine-tune, not LoRA).
#include "hilo/build-info.h"
#include "models/fortune-corpus.h"
#include "models/lm-checkpoint.h"
#include "models/next-token-trainer.h"
#include "models/tiny-lm.h"

#include <ATen/Parallel.h>
#include <boost/program_options.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace po = boost::program_options;

namespace
{

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitBadInput = 2;

const std::set<std::string> kTeacherDomain{"computers", "linux", "linuxcookie", "perl", "debian"};
const std::set<std::string> kSkipped{"ascii-art"};
// The categories of the fortunes package 1:1.99.1-7.3 (bookworm), in the order they are read.
const std::vector<std::string> kCategories{
    "art",           "ascii-art",  "computers", "cookie",       "debian",   "definitions",
    "disclaimer",    "drugs",      "education", "ethnic",       "food",     "fortunes",
    "goedel",        "humorists",  "kids",      "knghtbrd",     "law",      "linux",
    "linuxcookie",   "literature", "love",      "magic",        "medicine", "men-women",
    "miscellaneous", "news",       "paradoxum", "people",       "perl",     "pets",
    "platitudes",    "politics",   "pratchett", "riddles",      "science",  "songs-poems",
    "sports",        "startrek",   "tao",       "translate-me", "wisdom",   "work",
    "zippy"};

struct Texts
{
    std::string base_train, base_heldout, teacher_train, teacher_heldout;
};

bool
ReadFile(const std::string& path, std::string* out)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
    {
        return false;
    }
    std::ostringstream s;
    s << f.rdbuf();
    *out = s.str();
    return true;
}

/// Uniform next-byte windows of `text`, one SeededRng per step.
std::function<at::Tensor(int64_t)>
Windows(const std::string& text, int64_t batch, int64_t len, uint64_t seed)
{
    return [&text, batch, len, seed](int64_t step)
    {
        models::SeededRng rng(models::SeededRng::Mix({seed, static_cast<uint64_t>(step)}));
        return models::TextWindows(text, batch, len, &rng);
    };
}

/// Mean next-byte loss on `count` fixed windows of `text`.
double
HeldOutLoss(const models::TinyLm& lm, const std::string& text, int64_t count, uint64_t seed)
{
    models::SeededRng rng(seed);
    return models::NextTokenLoss(lm, models::TextWindows(text, count, lm.options().context, &rng));
}

/// Mean next-byte loss of the add-one unigram of `train` on the same windows (positions 1..).
double
UnigramLoss(const at::Tensor& logp, const std::string& text, int64_t count, int64_t len,
            uint64_t seed)
{
    models::SeededRng rng(seed);
    at::Tensor w = models::TextWindows(text, count, len, &rng).narrow(1, 1, len - 1);
    return -logp.index_select(0, w.reshape({-1})).mean().item<double>();
}

} // namespace

int
main(int argc, char** argv)
{
    std::string dir;
    std::string out;
    std::string spectrum;
    int64_t base_steps = 1500;
    int64_t teacher_steps = 400;
    int64_t batch = 32;
    double base_lr = 3e-3;
    double teacher_lr = 1e-3;
    uint64_t seed = 1;
    int64_t d_model = models::TextBaseShape::kDModel;
    int64_t layers = models::TextBaseShape::kLayers;
    int64_t heads = models::TextBaseShape::kHeads;
    po::options_description desc("pretrain-text options");
    // clang-format off
    desc.add_options()
        ("help", "this text")
        ("version", "print the commit and build type")
        ("fortunes", po::value(&dir)->default_value("/usr/share/games/fortunes"),
         "folder of the fortune data files (Debian package fortunes)")
        ("out", po::value(&out), "checkpoint to write (required)")
        ("spectrum", po::value(&spectrum), "CSV of the teacher delta's spectrum per matrix")
        ("base-steps", po::value(&base_steps)->default_value(1500), "base pretraining steps")
        ("teacher-steps", po::value(&teacher_steps)->default_value(400), "teacher fine-tune steps")
        ("batch", po::value(&batch)->default_value(32), "windows of 64 bytes per step")
        ("base-lr", po::value(&base_lr)->default_value(3e-3), "base peak learning rate")
        ("teacher-lr", po::value(&teacher_lr)->default_value(1e-3), "teacher peak learning rate")
        ("seed", po::value(&seed)->default_value(1), "initial weights and batches")
        ("d-model", po::value(&d_model)->default_value(models::TextBaseShape::kDModel),
         "model width (the committed base's by default)")
        ("layers", po::value(&layers)->default_value(models::TextBaseShape::kLayers),
         "transformer blocks")
        ("heads", po::value(&heads)->default_value(models::TextBaseShape::kHeads),
         "attention heads (must divide --d-model)");
    // clang-format on
    po::variables_map vm;
    try
    {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    }
    catch (const po::error& e)
    {
        std::cerr << "pretrain-text: " << e.what() << "\n" << desc;
        return kExitBadInput;
    }
    if (vm.count("help"))
    {
        std::cout << desc;
        return kExitOk;
    }
    if (vm.count("version"))
    {
        std::cout << hilo::VersionLine("pretrain-text") << "\n";
        return kExitOk;
    }
    if (out.empty() || base_steps < 1 || teacher_steps < 1 || batch < 1 || !(base_lr > 0) ||
        !(teacher_lr > 0))
    {
        std::cerr << "pretrain-text: need --out, steps >= 1, --batch >= 1, learning rates > 0\n";
        return kExitBadInput;
    }
    at::set_num_threads(1);

    Texts t;
    for (const std::string& category : kCategories)
    {
        if (kSkipped.count(category))
        {
            continue;
        }
        std::string text;
        if (!ReadFile(dir + "/" + category, &text))
        {
            std::cerr << "pretrain-text: cannot read " << dir << "/" << category
                      << " (install Debian's fortunes package: scripts/setup.sh)\n";
            return kExitBadInput;
        }
        const std::vector<std::string> records = models::SplitFortunes(text);
        const bool teacher = kTeacherDomain.count(category) > 0;
        for (size_t i = 0; i < records.size(); ++i)
        {
            const bool held = i % 10 == 9;
            std::string& to = teacher ? (held ? t.teacher_heldout : t.teacher_train)
                                      : (held ? t.base_heldout : t.base_train);
            to += records[i];
        }
    }
    std::cerr << "pretrain-text: base text " << t.base_train.size() << " B (held out "
              << t.base_heldout.size() << "), teacher text " << t.teacher_train.size()
              << " B (held out " << t.teacher_heldout.size() << ")\n";

    models::TinyLmOptions options;
    options.vocab = models::TextBaseShape::kVocab;
    options.d_model = d_model;
    options.layers = layers;
    options.heads = heads;
    options.context = models::TextBaseShape::kContext;
    options.seed = seed;
    options.logit_std = 1.0;
    hilo::StatusOr<models::TinyLm> created = models::TinyLm::Create(options);
    if (!created.ok())
    {
        std::cerr << "pretrain-text: --d-model/--layers/--heads: " << created.status().message()
                  << "\n";
        return kExitBadInput;
    }
    models::TinyLm base = std::move(created).value();
    int64_t params = 0;
    for (const auto& [name, w] : base.BaseWeights())
    {
        params += w.numel();
    }
    std::cerr << "pretrain-text: " << params << " parameters (d_model " << d_model << ", "
              << layers << " blocks, " << heads << " heads)\n";

    const int64_t len = options.context;
    models::NextTokenTrainerOptions train;
    train.steps = base_steps;
    train.warmup_steps = std::min<int64_t>(100, base_steps / 10);
    train.lr = base_lr;
    train.weight_decay = 0.01;
    std::vector<double> losses = models::TrainNextToken(
        base, Windows(t.base_train, batch, len, models::SeededRng::Mix({seed, 1})), train);
    std::cerr << "pretrain-text: base loss " << losses.front() << " -> " << losses.back() << "\n";

    models::TinyLm teacher = models::TinyLm::FromBaseWeights(options, base.BaseWeights()).value();
    train.steps = teacher_steps;
    train.warmup_steps = std::min<int64_t>(20, teacher_steps / 10);
    train.lr = teacher_lr;
    train.weight_decay = 0.0;
    losses = models::TrainNextToken(
        teacher, Windows(t.teacher_train, batch, len, models::SeededRng::Mix({seed, 2})), train);
    std::cerr << "pretrain-text: teacher loss " << losses.front() << " -> " << losses.back()
              << "\n";

    // Add-one unigram of the base's training bytes.
    std::vector<double> counts(256, 1.0);
    for (unsigned char c : t.base_train)
    {
        counts[c] += 1.0;
    }
    double total = 0;
    for (double c : counts)
    {
        total += c;
    }
    at::Tensor unigram = at::empty({256}, at::kFloat);
    for (int i = 0; i < 256; ++i)
    {
        unigram[i] = static_cast<float>(std::log(counts[i] / total));
    }

    const int64_t eval_windows = 512;
    const uint64_t eval_seed = models::SeededRng::Mix({seed, 3});
    char metrics[512];
    std::snprintf(metrics, sizeof(metrics),
                  "heldout_base_nats: base=%.4f teacher=%.4f unigram=%.4f\n"
                  "heldout_teacher_nats: base=%.4f teacher=%.4f unigram=%.4f\n",
                  HeldOutLoss(base, t.base_heldout, eval_windows, eval_seed),
                  HeldOutLoss(teacher, t.base_heldout, eval_windows, eval_seed),
                  UnigramLoss(unigram, t.base_heldout, eval_windows, len, eval_seed),
                  HeldOutLoss(base, t.teacher_heldout, eval_windows, eval_seed),
                  HeldOutLoss(teacher, t.teacher_heldout, eval_windows, eval_seed),
                  UnigramLoss(unigram, t.teacher_heldout, eval_windows, len, eval_seed));
    std::cerr << metrics;

    models::LmCheckpoint ckpt;
    for (const auto& [name, w] : base.BaseWeights())
    {
        ckpt.tensors["base." + name] = w;
    }
    for (const auto& [name, w] : teacher.BaseWeights())
    {
        ckpt.tensors["teacher." + name] = w;
    }
    ckpt.tensors["unigram.logp"] = unigram;
    ckpt.blobs["text.heldout.base"] = t.base_heldout;
    ckpt.blobs["text.heldout.teacher"] = t.teacher_heldout;
    std::ostringstream meta;
    meta << "command:";
    for (int i = 0; i < argc; ++i)
    {
        meta << " " << argv[i];
    }
    meta << "\nparams: " << params << "\nvocab: " << options.vocab << "\nd_model: " << options.d_model
         << "\nlayers: " << options.layers << "\nheads: " << options.heads
         << "\ncontext: " << options.context << "\n"
         << metrics;
    ckpt.blobs["meta"] = meta.str();
    std::ofstream f(out, std::ios::binary);
    const std::string bytes = ckpt.Serialize();
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f)
    {
        std::cerr << "pretrain-text: cannot write " << out << "\n";
        return kExitRuntime;
    }

    if (!spectrum.empty())
    {
        std::ofstream csv(spectrum);
        csv << "# command:";
        for (int i = 0; i < argc; ++i)
        {
            csv << " " << argv[i];
        }
        csv << "\n# singular values of teacher - base per adapted matrix; effective_rank = "
               "exp(entropy of sigma / sum sigma) (Roy and Vetterli 2007), stable_rank = "
               "||D||_F^2 / sigma_1^2, rank90 = singular values holding 90% of ||D||_F^2\n";
        csv << "matrix,rows,cols,rel_fro,effective_rank,stable_rank,rank90,sigma1,sigma_median\n";
        const auto tw = teacher.BaseWeights();
        for (const auto& [name, w] : base.BaseWeights())
        {
            if (name.rfind("layers.", 0) != 0)
            {
                continue;
            }
            const at::Tensor d = (tw.at(name) - w).to(at::kDouble);
            const at::Tensor s = at::linalg_svdvals(d);
            const at::Tensor p = s / s.sum();
            const double erank = std::exp(-(p * at::log(p.clamp_min(1e-300))).sum().item<double>());
            const at::Tensor s2 = s.pow(2);
            const double fro2 = s2.sum().item<double>();
            const double stable = fro2 / s2[0].item<double>();
            const at::Tensor cum = s2.cumsum(0) / fro2;
            const int64_t rank90 = (cum < 0.9).sum().item<int64_t>() + 1;
            char row[256];
            std::snprintf(
                row, sizeof(row), "%s,%lld,%lld,%.4f,%.2f,%.2f,%lld,%.5g,%.5g\n", name.c_str(),
                static_cast<long long>(d.size(0)), static_cast<long long>(d.size(1)),
                std::sqrt(fro2) / w.norm().item<double>(), erank, stable,
                static_cast<long long>(rank90), s[0].item<double>(), s.median().item<double>());
            csv << row;
        }
        if (!csv)
        {
            std::cerr << "pretrain-text: cannot write " << spectrum << "\n";
            return kExitRuntime;
        }
    }
    return kExitOk;
}

#include "models/gpu-profile.h"

#include "models/csv-table.h"

namespace models
{
namespace
{

constexpr const char* kGpusCsv =
#include "models/data/gpus-csv.inc"
    ;

struct Loaded
{
    hilo::Status status;
    std::vector<GpuProfile> gpus;
};

Loaded
Load()
{
    Loaded out;
    hilo::StatusOr<CsvTable> t = CsvTable::Parse(kGpusCsv, "models/data/gpus.csv");
    if (!t.ok())
    {
        out.status = t.status();
        return out;
    }
    for (size_t r = 0; r < t->rows(); ++r)
    {
        GpuProfile g;
        hilo::StatusOr<std::string> name = t->Text(r, "name");
        hilo::StatusOr<double> tf = t->Number(r, "dense_tflops");
        hilo::StatusOr<double> bw = t->Number(r, "mem_bw_gbs");
        hilo::StatusOr<double> mem = t->Number(r, "mem_gb");
        hilo::StatusOr<double> host = t->Number(r, "host_link_gbs");
        hilo::StatusOr<std::string> link = t->Text(r, "interconnect");
        hilo::StatusOr<double> link_gbs = t->Number(r, "interconnect_gbs");
        for (const hilo::Status* s : {&name.status(), &tf.status(), &bw.status(), &mem.status(),
                                      &host.status(), &link.status(), &link_gbs.status()})
        {
            if (!s->ok())
            {
                out.status = *s;
                out.gpus.clear();
                return out;
            }
        }
        g.name = *name;
        g.dense_tflops = *tf;
        g.mem_bw_gbs = *bw;
        g.mem_gb = *mem;
        g.host_link_gbs = *host;
        g.interconnect = *link;
        g.interconnect_gbs = *link_gbs;
        if (g.dense_tflops <= 0 || g.mem_bw_gbs <= 0 || g.mem_gb <= 0 || g.host_link_gbs <= 0 ||
            g.interconnect_gbs <= 0 || g.interconnect.empty())
        {
            out.status =
                hilo::Status::InvalidArgument("models/data/gpus.csv: " + g.name +
                                              ": numbers must be positive and interconnect named");
            out.gpus.clear();
            return out;
        }
        out.gpus.push_back(g);
    }
    return out;
}

const Loaded&
Table()
{
    static const Loaded loaded = Load();
    return loaded;
}

} // namespace

const std::vector<GpuProfile>&
ListGpus()
{
    return Table().gpus;
}

hilo::StatusOr<GpuProfile>
FindGpu(const std::string& name)
{
    const Loaded& t = Table();
    if (!t.status.ok())
    {
        return t.status;
    }
    std::string known;
    for (const GpuProfile& g : t.gpus)
    {
        if (g.name == name)
        {
            return g;
        }
        known += (known.empty() ? "" : ", ") + g.name;
    }
    return hilo::Status::NotFound("unknown GPU '" + name + "'; known: " + known);
}

} // namespace models

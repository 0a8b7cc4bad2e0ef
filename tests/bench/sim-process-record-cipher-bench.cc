// What sealing every byte after the hello costs a keyed process connection (record-cipher.h):
// GB/s of seal and of open, one core, with records of 64 KiB (the size the transport cuts large
// messages and their padding into) and of 1 KiB (small messages). Not run by CTest. Usage:
//   build/tests/sim-process-record-cipher-bench [--gb=N]   (default: 2 GB each way per size)
// prints a table (results/sim/aead-cost.txt).
#include "sim/drivers/process/record-cipher.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{

using namespace hilosim;

double
Seconds(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Cost
{
    double seal_gbps;
    double open_gbps;
};

// Seals then opens `total_bytes` of plaintext in records of `record_bytes`, a batch of 64 MiB of
// records at a time (in memory, as a send queue would hold them), and checks every byte came back.
Cost
Measure(size_t record_bytes, double total_bytes)
{
    const std::string key(RecordFormat::kKeyBytes, 'k');
    RecordSealer sealer(key);
    RecordOpener opener(key);
    std::string plain(record_bytes, '\0');
    for (size_t i = 0; i < plain.size(); ++i)
        plain[i] = static_cast<char>(i * 131 + 7);
    const size_t batch = std::max<size_t>(1, (64u << 20) / record_bytes); // 64 MiB of records
    const size_t batches =
        std::max<size_t>(1, static_cast<size_t>(total_bytes / (batch * record_bytes)));
    std::vector<std::string> records(batch);
    std::string opened;
    double seal_s = 0;
    double open_s = 0;
    // Batch 0 warms up (allocates the records' memory) and is not timed.
    for (size_t b = 0; b <= batches; ++b)
    {
        if (b == 1)
        {
            seal_s = 0;
            open_s = 0;
        }
        auto t0 = std::chrono::steady_clock::now();
        for (std::string& r : records)
        {
            r.clear();
            if (!sealer.Seal(plain, &r).ok())
            {
                std::fprintf(stderr, "seal failed\n");
                std::exit(1);
            }
        }
        seal_s += Seconds(t0);
        t0 = std::chrono::steady_clock::now();
        for (const std::string& r : records)
        {
            const std::string_view all(r);
            if (!opener
                     .Open(all.substr(0, RecordFormat::kHeaderBytes),
                           all.substr(RecordFormat::kHeaderBytes), &opened)
                     .ok())
            {
                std::fprintf(stderr, "open failed: %s\n", opener.error().message().c_str());
                std::exit(1);
            }
        }
        open_s += Seconds(t0);
        if (opened != plain)
        {
            std::fprintf(stderr, "a record did not round-trip\n");
            std::exit(1);
        }
    }
    const double gb = static_cast<double>(batches * batch * record_bytes) / 1e9;
    return {gb / seal_s, gb / open_s};
}

} // namespace

int
main(int argc, char** argv)
{
    double gb = 2;
    for (int i = 1; i < argc; ++i)
    {
        if (std::strncmp(argv[i], "--gb=", 5) == 0)
            gb = std::atof(argv[i] + 5);
        else
        {
            std::fprintf(stderr, "usage: %s [--gb=N]\n", argv[0]);
            return 2;
        }
    }
    std::printf("%-14s %10s %10s %14s %14s\n", "record_bytes", "seal_GB/s", "open_GB/s",
                "seal_s_per_GB", "open_s_per_GB");
    for (size_t record : {size_t{64} << 10, size_t{1} << 10})
    {
        const Cost c = Measure(record, gb * 1e9);
        std::printf("%-14zu %10.3f %10.3f %14.3f %14.3f\n", record, c.seal_gbps, c.open_gbps,
                    1 / c.seal_gbps, 1 / c.open_gbps);
    }
    return 0;
}

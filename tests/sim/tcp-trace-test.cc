// The TCP trace (--trace-tcp; sim/net/tcp-trace.h) end to end: hilo-sim under the packet and the
// flow model and hilo-emu --network direct (loopback, the kernel's TCP_INFO) write tcp-trace.csv
// with the same columns and sane values, deterministically in the simulator, without changing
// any other output.
#include "sim/net/tcp-trace.h"

#include "tests/sim/process-test-util.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace hilosim
{
namespace
{

const std::string kBin = std::string(HILO_BINARY_DIR) + "/sim/";

// Written out here, not taken from TcpTraceHeader(): a column dropped or renamed in the code
// fails this test.
const std::vector<std::string> kColumns = {"arm",
                                           "time_s",
                                           "node",
                                           "peer",
                                           "cwnd_bytes",
                                           "ssthresh_bytes",
                                           "srtt_s",
                                           "min_rtt_s",
                                           "delivery_rate_bps",
                                           "bytes_acked",
                                           "retransmits",
                                           "in_slow_start",
                                           "hystart_train_exits",
                                           "hystart_delay_exits"};

using Csv = std::vector<std::vector<std::string>>;

std::string
Cell(const Csv& csv, size_t row, const std::string& column)
{
    return csv.at(row).at(test::Column(csv, column));
}

// Checks every row of one trace: the row has every column, times run forward within an arm,
// cwnd is filled and positive; `filled` and `empty` name the columns this side must fill on every
// row and must leave empty; srtt and min RTT, when filled, are at least `min_rtt_s`.
void
ExpectSaneTrace(const std::string& side, const Csv& csv, const std::vector<std::string>& filled,
                const std::vector<std::string>& empty, double min_rtt_s)
{
    ASSERT_FALSE(csv.empty()) << side;
    EXPECT_EQ(csv[0], kColumns) << side << ": the header";
    ASSERT_GT(csv.size(), 2u) << side << ": no rows";
    std::map<std::string, double> last_time; // by arm
    for (size_t r = 1; r < csv.size(); ++r)
    {
        ASSERT_EQ(csv[r].size(), kColumns.size()) << side << " row " << r;
        const double t = std::atof(Cell(csv, r, "time_s").c_str());
        const std::string arm = Cell(csv, r, "arm");
        if (last_time.count(arm) != 0)
            EXPECT_GE(t, last_time[arm]) << side << " row " << r << ": rows out of time order";
        last_time[arm] = t;
        EXPECT_GT(std::atof(Cell(csv, r, "cwnd_bytes").c_str()), 0) << side << " row " << r;
        for (const std::string& c : filled)
            EXPECT_FALSE(Cell(csv, r, c).empty()) << side << " row " << r << ": " << c;
        for (const std::string& c : empty)
            EXPECT_TRUE(Cell(csv, r, c).empty()) << side << " row " << r << ": " << c;
        for (const char* c : {"srtt_s", "min_rtt_s"})
        {
            if (!Cell(csv, r, c).empty())
                EXPECT_GE(std::atof(Cell(csv, r, c).c_str()), min_rtt_s - 1e-9)
                    << side << " row " << r << ": " << c;
        }
    }
    EXPECT_EQ(last_time.size(), 2u) << side << ": both arms of the scenario";
}

TEST(TcpTrace, RowsRoundTripThroughTheirCsvLine)
{
    TcpTraceRow row{"hilo-spar", 0.25, "worker-1", "learner", {}};
    row.sample.cwnd_bytes = 14480;
    row.sample.srtt_s = 0.0412;
    row.sample.in_slow_start = false;
    row.sample.hystart_train_exits = 1;
    const std::string line = FormatTcpTraceRow(row);
    EXPECT_EQ(line, "hilo-spar,0.25,worker-1,learner,14480,,0.0412,,,,,0,1,");
    auto back = ParseTcpTraceRow(line);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(FormatTcpTraceRow(*back), line);
    EXPECT_FALSE(ParseTcpTraceRow("hilo-spar,0.25,worker-1,learner,14480").ok());
    EXPECT_FALSE(ParseTcpTraceRow("a,0.25,worker-1,learner,x,,,,,,,,,").ok());
    std::string header;
    for (const std::string& c : kColumns)
        header += (header.empty() ? "" : ",") + c;
    EXPECT_EQ(TcpTraceHeader(), header);
}

TEST(TcpTrace, BothDriversAndBothModelsWriteTheSameColumns)
{
    test::ProcessSandbox box("hilo-tcp-trace-test",
                             std::string(HILO_SOURCE_DIR) + "/tests/scripts/tiny.textproto");
    const std::string dir = box.dir.string();
    const std::string sim = kBin + "hilo-sim run " + box.scenario + " --quiet ";
    auto packet = test::RunCommand(sim + "--trace-tcp --out " + dir + "/packet");
    ASSERT_EQ(packet.exit_code, 0) << packet.output;
    auto flow =
        test::RunCommand(sim + "--set network.model=flow --trace-tcp --out " + dir + "/flow");
    ASSERT_EQ(flow.exit_code, 0) << flow.output;
    auto emu = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                                " --network direct --quiet --trace-tcp --out " + dir + "/emu");
    ASSERT_EQ(emu.exit_code, 0) << emu.output;
    EXPECT_EQ(box.LiveProcesses(), 0);

    // The tiny scenario's paths: 20 ms each way on every worker link.
    const double rtt_s = 0.040;
    ExpectSaneTrace("packet", test::ReadCsv(dir + "/packet/tcp-trace.csv"),
                    {"srtt_s", "delivery_rate_bps", "bytes_acked", "retransmits", "in_slow_start",
                     "hystart_train_exits", "hystart_delay_exits"},
                    {}, rtt_s);
    ExpectSaneTrace("flow", test::ReadCsv(dir + "/flow/tcp-trace.csv"),
                    {"min_rtt_s", "delivery_rate_bps", "in_slow_start", "hystart_train_exits",
                     "hystart_delay_exits"},
                    {"bytes_acked"}, rtt_s);
    // Loopback: the kernel's RTT is microseconds; HyStart's exits are not in TCP_INFO.
    ExpectSaneTrace("emulation", test::ReadCsv(dir + "/emu/tcp-trace.csv"),
                    {"srtt_s", "delivery_rate_bps", "bytes_acked", "retransmits", "in_slow_start"},
                    {"hystart_train_exits", "hystart_delay_exits"}, 0);
    // The learner's end and the workers' ends are all there, in every side.
    for (const char* side : {"packet", "flow", "emu"})
    {
        const Csv csv = test::ReadCsv(dir + "/" + side + "/tcp-trace.csv");
        std::map<std::string, int> ends;
        for (size_t r = 1; r < csv.size(); ++r)
            ++ends[Cell(csv, r, "node") + ">" + Cell(csv, r, "peer")];
        for (const char* end :
             {"learner>worker-0", "learner>worker-1", "worker-0>learner", "worker-1>learner"})
            EXPECT_GT(ends[end], 0) << side << ": " << end;
    }
    EXPECT_TRUE(std::filesystem::exists(dir + "/emu/nodes/full/learner.tcp-trace.csv.hystart.csv"));
}

TEST(TcpTrace, TheSimulatorsTraceIsDeterministicAndChangesNoOtherOutput)
{
    test::ProcessSandbox box("hilo-tcp-trace-same",
                             std::string(HILO_SOURCE_DIR) + "/tests/scripts/tiny.textproto");
    const std::string dir = box.dir.string();
    const std::string sim = kBin + "hilo-sim run " + box.scenario + " --quiet ";
    auto traced = test::RunCommand(sim + "--trace-tcp --out " + dir + "/traced");
    ASSERT_EQ(traced.exit_code, 0) << traced.output;
    // The arms in child processes: the rows cross the arm-result codec.
    auto forked = test::RunCommand(sim + "--trace-tcp --jobs 2 --out " + dir + "/forked");
    ASSERT_EQ(forked.exit_code, 0) << forked.output;
    auto plain = test::RunCommand(sim + "--out " + dir + "/plain");
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    const std::string trace = test::ReadFile(dir + "/traced/tcp-trace.csv");
    EXPECT_GT(trace.size(), 200u);
    EXPECT_EQ(test::ReadFile(dir + "/forked/tcp-trace.csv"), trace);
    EXPECT_FALSE(std::filesystem::exists(dir + "/plain/tcp-trace.csv"));
    for (const char* file : {"summary.json", "steps.csv", "workers.csv", "rollouts.csv",
                             "allocation.csv", "links.csv", "resolved.textproto"})
    {
        EXPECT_EQ(test::ReadFile(dir + "/traced/" + file), test::ReadFile(dir + "/plain/" + file))
            << file << " differs with --trace-tcp";
    }
}

} // namespace
} // namespace hilosim

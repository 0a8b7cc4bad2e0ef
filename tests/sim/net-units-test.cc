// Unit strings at the scenario boundary (sim/net/units.h): good strings convert exactly, bad ones
// return InvalidArgument naming the string and the problem, and nothing aborts.
#include "sim/net/link-spec.h"
#include "sim/net/units.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

TEST(NetUnits, DataRatesParse)
{
    EXPECT_EQ(ParseDataRate("100Mbps")->GetBitRate(), 100000000u);
    EXPECT_EQ(ParseDataRate("2.5 Gbps")->GetBitRate(), 2500000000u);
    EXPECT_EQ(ParseDataRate("  64kbps ")->GetBitRate(), 64000u);
    EXPECT_EQ(ParseDataRate("64Kbps")->GetBitRate(), 64000u);
    EXPECT_EQ(ParseDataRate("10MBps")->GetBitRate(), 80000000u);
    EXPECT_EQ(ParseDataRate("1e3bps")->GetBitRate(), 1000u);
    EXPECT_EQ(ParseDataRate("+1Gbps")->GetBitRate(), 1000000000u);
}

TEST(NetUnits, BadDataRatesNameTheProblem)
{
    auto noUnit = ParseDataRate("100");
    ASSERT_FALSE(noUnit.ok());
    EXPECT_EQ(noUnit.status().code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(noUnit.status().message().find("\"100\""), std::string::npos);
    EXPECT_NE(noUnit.status().message().find("no unit"), std::string::npos);
    EXPECT_NE(noUnit.status().message().find("Mbps"), std::string::npos) << "lists allowed units";

    auto negative = ParseDataRate("-5Mbps");
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.status().message().find("must be positive"), std::string::npos);

    auto zero = ParseDataRate("0Mbps");
    ASSERT_FALSE(zero.ok());
    EXPECT_NE(zero.status().message().find("must be positive"), std::string::npos);

    auto word = ParseDataRate("fast");
    ASSERT_FALSE(word.ok());
    EXPECT_NE(word.status().message().find("does not start with a number"), std::string::npos);

    auto unknown = ParseDataRate("10 parsecs");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.status().message().find("unknown unit \"parsecs\""), std::string::npos);

    auto trailing = ParseDataRate("10 Mbps please");
    ASSERT_FALSE(trailing.ok());
    EXPECT_NE(trailing.status().message().find("trailing"), std::string::npos);

    EXPECT_FALSE(ParseDataRate("").ok());
    EXPECT_FALSE(ParseDataRate("Mbps").ok());
    EXPECT_FALSE(ParseDataRate("0.0001bps").ok()); // below one bit per second
    EXPECT_FALSE(ParseDataRate("1e400Gbps").ok());
}

TEST(NetUnits, TimesParse)
{
    EXPECT_EQ(ParseTime("40ms")->GetNanoSeconds(), 40000000);
    EXPECT_EQ(ParseTime("1.5 s")->GetNanoSeconds(), 1500000000);
    EXPECT_EQ(ParseTime("250us")->GetNanoSeconds(), 250000);
    EXPECT_EQ(ParseTime("2min")->GetSeconds(), 120.0);
    EXPECT_EQ(ParseTime("1h")->GetSeconds(), 3600.0);
    EXPECT_EQ(ParseTime("0ms")->GetNanoSeconds(), 0) << "zero delay is a valid LAN link";
}

TEST(NetUnits, BadTimesNameTheProblem)
{
    auto noUnit = ParseTime("40");
    ASSERT_FALSE(noUnit.ok());
    EXPECT_NE(noUnit.status().message().find("no unit"), std::string::npos);
    auto negative = ParseTime("-5ms");
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.status().message().find("must not be negative"), std::string::npos);
    auto unknown = ParseTime("10 parsecs");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.status().message().find("unknown unit"), std::string::npos);
    EXPECT_NE(unknown.status().message().find("ms"), std::string::npos);
    EXPECT_FALSE(ParseTime("fast").ok());
    EXPECT_FALSE(ParseTime("1e12s").ok());
    EXPECT_FALSE(ParseTime("0.1ns").ok()); // below the default nanosecond resolution
}

TEST(NetUnits, BytesParse)
{
    EXPECT_EQ(*ParseBytes("64KiB"), 65536u);
    EXPECT_EQ(*ParseBytes("10MB"), 10000000u);
    EXPECT_EQ(*ParseBytes("1.5 GiB"), 1610612736u);
    EXPECT_EQ(*ParseBytes("0B"), 0u);
    EXPECT_FALSE(ParseBytes("10").ok());
    EXPECT_FALSE(ParseBytes("-1KB").ok());
    EXPECT_FALSE(ParseBytes("10 bytes").ok());
}

TEST(NetUnits, TcpVariants)
{
    EXPECT_EQ(ParseTcpVariant("cubic")->GetName(), "ns3::TcpCubic");
    EXPECT_EQ(ParseTcpVariant("TcpNewReno")->GetName(), "ns3::TcpNewReno");
    EXPECT_EQ(ParseTcpVariant("ns3::TcpBbr")->GetName(), "ns3::TcpBbr");
    EXPECT_EQ(ParseTcpVariant("dctcp")->GetName(), "ns3::TcpDctcp");
    auto bad = ParseTcpVariant("quic");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("\"quic\""), std::string::npos);
    EXPECT_FALSE(ParseTcpVariant("Node").ok()) << "a TypeId that is not a congestion control";
}

TEST(NetUnits, FormatDataRateRoundTrips)
{
    EXPECT_EQ(FormatDataRate(ns3::DataRate(100000000)), "100Mbps");
    EXPECT_EQ(FormatDataRate(ns3::DataRate(2500000000ULL)), "2500Mbps");
    EXPECT_EQ(FormatDataRate(ns3::DataRate(1234)), "1234bps");
    EXPECT_EQ(ParseDataRate(FormatDataRate(ns3::DataRate(2500000000ULL)))->GetBitRate(),
              2500000000u);
}

TEST(NetLinkSpec, ValidationNamesTheField)
{
    LinkSpec link;
    link.rate = *ParseDataRate("100Mbps");
    link.delay = *ParseTime("40ms");
    EXPECT_TRUE(link.Validate("worker 0 link").ok());

    LinkSpec lossy = link;
    lossy.loss_rate = 1.5;
    auto s = lossy.Validate("worker 3 link");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("worker 3 link: loss_rate"), std::string::npos);

    LinkSpec queue = link;
    queue.queue_disc = "wfq";
    s = queue.Validate("uplink");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("fq_codel"), std::string::npos) << "lists the allowed discs";

    LinkSpec mtu = link;
    mtu.mtu = 100;
    EXPECT_FALSE(mtu.Validate("x").ok());

    TopologySpec star;
    EXPECT_FALSE(star.Validate().ok()) << "no workers";
    star.worker_links = {link, link};
    EXPECT_TRUE(star.Validate().ok());
    EXPECT_EQ(star.WorkerCount(), 2u);
    star.worker_links[1] = lossy;
    s = star.Validate();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("worker 1 link"), std::string::npos);

    TopologySpec regions;
    regions.kind = TopologyKind::kRegions;
    regions.regions = {RegionSpec{"eu", link, {link}}, RegionSpec{"eu", link, {link}}};
    s = regions.Validate();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("used twice"), std::string::npos);

    EXPECT_EQ(*ParseTopologyKind("relay"), TopologyKind::kRelay);
    EXPECT_FALSE(ParseTopologyKind("mesh").ok());
}

} // namespace
} // namespace hilosim

#include "sim/scenario/budget-text.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

TEST(ScenarioBudgetText, ParsesFractionsSizesAndUnlimited)
{
    EXPECT_TRUE(ParseBudget("")->unlimited());
    EXPECT_TRUE(ParseBudget("unlimited")->unlimited());
    EXPECT_EQ(ParseBudget("1.6%")->ResolveBytes(1000000), 16000);
    EXPECT_EQ(ParseBudget("100%")->ResolveBytes(1000), 1000);
    EXPECT_EQ(ParseBudget("64KiB")->ResolveBytes(1000000), 65536);
    EXPECT_EQ(ParseBudget("4096B")->ResolveBytes(1), 4096);
    EXPECT_EQ(ParseBudget("2MB")->ResolveBytes(1), 2000000);
}

TEST(ScenarioBudgetText, RejectsMalformedText)
{
    for (const char* bad :
         {"5 percent", "0%", "101%", "%", "-1%", "1e2%", "0B", "64kib", "-4KiB", "lots"})
    {
        auto b = ParseBudget(bad);
        ASSERT_FALSE(b.ok()) << bad;
        EXPECT_NE(b.status().message().find("bad budget"), std::string::npos) << bad;
        EXPECT_NE(b.status().message().find("allowed: a percentage"), std::string::npos) << bad;
    }
}

} // namespace
} // namespace hilosim

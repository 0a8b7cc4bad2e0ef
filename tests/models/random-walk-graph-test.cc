// RandomWalkGraph: trlX's randomwalks task. The optimal walk scores 1, invalid or goal-less walks
// score 0, a uniformly random policy scores far less than 1, and the graph is a function of its
// seed.
#include "models/random-walk-graph.h"

#include <gtest/gtest.h>

namespace models
{
namespace
{

RandomWalkGraph
Default()
{
    return RandomWalkGraph(/*nodes=*/21, /*p_edge=*/0.1, /*max_length=*/10, /*seed=*/1002);
}

TEST(RandomWalkGraph, EveryStartsShortestWalkScoresOne)
{
    const RandomWalkGraph g = Default();
    ASSERT_GE(g.starts().size(), 5u);
    for (int64_t s : g.starts())
    {
        const std::vector<int64_t> best = g.ShortestWalk(s);
        ASSERT_EQ(static_cast<int64_t>(best.size()), g.Shortest(s));
        ASSERT_LT(g.Shortest(s), g.max_length());
        for (size_t i = 1; i < best.size(); ++i)
        {
            ASSERT_TRUE(g.Edge(best[i - 1], best[i]));
        }
        // Padded with the goal's self-loop, as a generated walk of fixed length would be.
        std::vector<int64_t> walk = best;
        walk.resize(static_cast<size_t>(g.max_length()), RandomWalkGraph::kGoal);
        EXPECT_DOUBLE_EQ(g.Optimality(walk.data(), static_cast<int64_t>(walk.size())), 1.0) << s;
    }
}

TEST(RandomWalkGraph, LongerInvalidAndGoalLessWalksScoreLess)
{
    const RandomWalkGraph g = Default();
    // Find a start with a two-step detour: start -> x -> (shortest from x) with x off the path.
    bool checked_detour = false;
    for (int64_t s : g.starts())
    {
        for (int64_t x = 1; x < g.nodes() && !checked_detour; ++x)
        {
            if (!g.Edge(s, x) || g.Shortest(x) < 0 || 1 + g.Shortest(x) <= g.Shortest(s) ||
                1 + g.Shortest(x) > g.max_length())
            {
                continue;
            }
            std::vector<int64_t> walk{s};
            for (int64_t n : g.ShortestWalk(x))
            {
                walk.push_back(n);
            }
            const int64_t len = static_cast<int64_t>(walk.size());
            const double want =
                double(g.max_length() - len) / double(g.max_length() - g.Shortest(s));
            EXPECT_DOUBLE_EQ(g.Optimality(walk.data(), len), want);
            EXPECT_LT(want, 1.0);
            checked_detour = true;
        }
    }
    EXPECT_TRUE(checked_detour);
    const int64_t s = g.starts().front();
    // A token outside the graph, a missing edge, and a walk that never reaches the goal.
    std::vector<int64_t> bad{s, 99};
    EXPECT_EQ(g.Optimality(bad.data(), 2), 0.0);
    int64_t missing = -1;
    for (int64_t j = 1; j < g.nodes() && missing < 0; ++j)
    {
        if (j != s && !g.Edge(s, j))
        {
            missing = j;
        }
    }
    ASSERT_GE(missing, 0);
    std::vector<int64_t> jump{s, missing, RandomWalkGraph::kGoal};
    EXPECT_EQ(g.Optimality(jump.data(), 3), 0.0);
    std::vector<int64_t> stay{s};
    EXPECT_EQ(g.Optimality(stay.data(), 1), 0.0);
}

TEST(RandomWalkGraph, RandomPoliciesScoreFarBelowOptimal)
{
    const RandomWalkGraph g = Default();
    SeededRng rng(3);
    double uniform_tokens = 0;
    double random_walks = 0;
    const int n = 4000;
    for (int i = 0; i < n; ++i)
    {
        const int64_t s = g.starts()[rng.Below(g.starts().size())];
        std::vector<int64_t> walk{s};
        for (int64_t j = 1; j < g.max_length(); ++j)
        {
            walk.push_back(static_cast<int64_t>(rng.Below(21)));
        }
        uniform_tokens += g.Optimality(walk.data(), g.max_length());
        const std::vector<int64_t> w = g.SampleWalk(s, g.max_length(), &rng);
        random_walks += g.Optimality(w.data(), g.max_length());
    }
    uniform_tokens /= n;
    random_walks /= n;
    // Uniform tokens almost never follow an edge; a uniform walk on the graph (the pretrained
    // base's policy) sometimes reaches the goal, rarely by a shortest walk.
    EXPECT_LT(uniform_tokens, 0.05);
    EXPECT_LT(random_walks, 0.5);
    EXPECT_GT(random_walks, uniform_tokens);
}

TEST(RandomWalkGraph, TheGraphIsAFunctionOfItsSeed)
{
    const RandomWalkGraph a = Default();
    const RandomWalkGraph b = Default();
    const RandomWalkGraph c(21, 0.1, 10, 1003);
    bool differ = false;
    for (int64_t i = 0; i < 21; ++i)
    {
        for (int64_t j = 0; j < 21; ++j)
        {
            ASSERT_EQ(a.Edge(i, j), b.Edge(i, j));
            differ |= a.Edge(i, j) != c.Edge(i, j);
        }
        ASSERT_TRUE(a.Edge(RandomWalkGraph::kGoal, RandomWalkGraph::kGoal));
        if (i != RandomWalkGraph::kGoal)
        {
            ASSERT_FALSE(a.Edge(RandomWalkGraph::kGoal, i));
            ASSERT_FALSE(a.Edge(i, i));
        }
    }
    EXPECT_TRUE(differ);
}

} // namespace
} // namespace models

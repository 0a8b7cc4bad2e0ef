// StreamIdSet keeps ids unique and ascending whatever the order they come and go in.
#include "sim/net/flow/stream-id-set.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

TEST(StreamIdSet, UniqueAndAscending)
{
    StreamIdSet set;
    for (uint32_t id : {7u, 3u, 9u, 3u, 0u, 7u})
    {
        set.Insert(id);
    }
    EXPECT_EQ(set.ids(), (std::vector<uint32_t>{0, 3, 7, 9}));
    set.Erase(3);
    set.Erase(4); // not held: nothing happens
    EXPECT_EQ(set.ids(), (std::vector<uint32_t>{0, 7, 9}));
    set.Insert(5);
    EXPECT_EQ(set.ids(), (std::vector<uint32_t>{0, 5, 7, 9}));
    set.Clear();
    EXPECT_TRUE(set.ids().empty());
}

} // namespace
} // namespace hilosim

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "topology/hostlist.h"

using namespace harmonics;

using Names = std::vector<std::string>;

TEST(Hostlist, ExpandsRangesAndSingles) {
    EXPECT_EQ(expand_hostlist("n[1-4,7]"), (Names{"n1", "n2", "n3", "n4", "n7"}));
    EXPECT_EQ(expand_hostlist("n5"), (Names{"n5"}));
    EXPECT_EQ(expand_hostlist("login"), (Names{"login"}));
}

TEST(Hostlist, KeepsZeroPadding) {
    Names r = expand_hostlist("rack[01-16]");
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(r.front(), "rack01");
    EXPECT_EQ(r[8], "rack09");
    EXPECT_EQ(r.back(), "rack16");
    EXPECT_EQ(expand_hostlist("n[098-101]"), (Names{"n098", "n099", "n100", "n101"}));
}

TEST(Hostlist, UnpaddedRangeCrossesDigitCount) {
    EXPECT_EQ(expand_hostlist("n[9-11]"), (Names{"n9", "n10", "n11"}));
}

TEST(Hostlist, CommaListMixesTerms) {
    EXPECT_EQ(expand_hostlist("n1,n[3-5],gpu[2,4]"), (Names{"n1", "n3", "n4", "n5", "gpu2", "gpu4"}));
}

TEST(Hostlist, SeveralBracketsGiveTheCrossProduct) {
    EXPECT_EQ(expand_hostlist("a[1-2]b[3-4]"), (Names{"a1b3", "a1b4", "a2b3", "a2b4"}));
    EXPECT_EQ(expand_hostlist("r[1-2]-ib"), (Names{"r1-ib", "r2-ib"}));
}

// Each malformed expression throws a HostlistError (an invalid_argument) whose
// message quotes the input and names the problem.
static std::string error_of(const std::string& expr) {
    try {
        expand_hostlist(expr);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(Hostlist, BadExpressionsNameTheProblem) {
    EXPECT_NE(error_of("n[5-3]").find("starts after it ends"), std::string::npos) << error_of("n[5-3]");
    EXPECT_NE(error_of("n[5-3]").find("'n[5-3]'"), std::string::npos);
    EXPECT_NE(error_of("n[1-4").find("'[' without ']'"), std::string::npos);
    EXPECT_NE(error_of("n1-4]").find("']' without '['"), std::string::npos);
    EXPECT_NE(error_of("n[]").find("empty brackets"), std::string::npos);
    EXPECT_NE(error_of("n[a-c]").find("not a number"), std::string::npos);
    EXPECT_NE(error_of("n[1-]").find("not a number"), std::string::npos);
    EXPECT_NE(error_of("n[1,,3]").find("empty range"), std::string::npos);
    EXPECT_NE(error_of("n1,,n2").find("empty host name"), std::string::npos);
    EXPECT_NE(error_of("n[[1-2]]").find("nested"), std::string::npos);
    EXPECT_NE(error_of("n1 n2").find("space"), std::string::npos);
    EXPECT_NE(error_of("").find("empty"), std::string::npos);
    EXPECT_NE(error_of("n[1-99999999999]").find("more than"), std::string::npos);
}

TEST(Hostlist, ErrorIsHostlistError) {
    EXPECT_THROW(expand_hostlist("n[3-1]"), HostlistError);
}

TEST(Hostlist, CompressesRunsAndSingles) {
    EXPECT_EQ(compress_hostlist({"n1", "n2", "n3", "n4", "n7"}), "n[1-4,7]");
    EXPECT_EQ(compress_hostlist({"n7"}), "n7");
    EXPECT_EQ(compress_hostlist({"n4", "n2", "n3", "n2"}), "n[2-4]");
    EXPECT_EQ(compress_hostlist({}), "");
}

TEST(Hostlist, CompressKeepsPaddingAndPrefixes) {
    EXPECT_EQ(compress_hostlist({"rack01", "rack02", "rack03", "rack10"}), "rack[01-03,10]");
    EXPECT_EQ(compress_hostlist({"n1", "gpu1", "n2", "login"}), "n[1-2],gpu1,login");
    // n9 and n10 are one unpadded group; n08 is padded to width 2.
    EXPECT_EQ(compress_hostlist({"n9", "n10"}), "n[9-10]");
}

TEST(Hostlist, RoundTripsKeepTheSet) {
    for (const std::string expr :
         {"n[1-4,7]", "rack[01-16]", "n1,n[3-5]", "a[1-2]b[3-4]", "n[098-101]", "x[1-3],y[07-09],z", "n[9-11,20]"}) {
        Names once = expand_hostlist(expr);
        Names twice = expand_hostlist(compress_hostlist(once));
        std::sort(once.begin(), once.end());
        std::sort(twice.begin(), twice.end());
        EXPECT_EQ(once, twice) << expr << " -> " << compress_hostlist(expand_hostlist(expr));
    }
    EXPECT_EQ(compress_hostlist(expand_hostlist("rack[01-16]")), "rack[01-16]");
    EXPECT_EQ(compress_hostlist(expand_hostlist("n1,n[3-5]")), "n[1,3-5]");
}

// Random sets of names (several prefixes, padded and unpadded numbers, some
// names without numbers): compress then expand gives back the same set.
TEST(Hostlist, RandomRoundTrips) {
    std::mt19937 rng(12345);
    const char* prefixes[] = {"n", "gpu", "rack", "a1b"};
    for (int round = 0; round < 500; ++round) {
        std::set<std::string> names;
        int count = 1 + static_cast<int>(rng() % 40);
        for (int i = 0; i < count; ++i) {
            std::string p = prefixes[rng() % 4];
            unsigned v = rng() % 130;
            switch (rng() % 4) {
                case 0: names.insert(p); break;
                case 1: {
                    std::string num = std::to_string(v);
                    names.insert(p + std::string(3 - std::min<std::size_t>(3, num.size()), '0') + num);
                    break;
                }
                default: names.insert(p + std::to_string(v));
            }
        }
        std::vector<std::string> in(names.begin(), names.end());
        std::string compressed = compress_hostlist(in);
        std::vector<std::string> out = expand_hostlist(compressed);
        std::set<std::string> back(out.begin(), out.end());
        ASSERT_EQ(back, names) << compressed;
        ASSERT_EQ(out.size(), names.size()) << compressed;  // no name twice
    }
}

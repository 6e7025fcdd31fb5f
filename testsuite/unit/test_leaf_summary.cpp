// The leaf summary file: round trip, errors that name file/line/key, atomic
// replacement, and a reader that re-reads only when the file changed.
#include "state/leaf_summary.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace harmonics::state;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/harmonics-state-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

Summary two_racks(uint64_t epoch) {
    Summary s;
    s.epoch = epoch;
    s.written = 1764500000.25;
    s.leaves.push_back({"rack1", "n[1-4]", "rack1", 4, 0.35, true});
    s.leaves.push_back({"rack2", "n[5-8]", "", 4, 0.92, false});
    s.partitions.push_back({"debug", "n[1-8]", true});
    s.partitions.push_back({"r1", "n[1-4]", false});
    return s;
}

void spit(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

}  // namespace

TEST(LeafSummary, RoundTrip) {
    Summary in = two_racks(42), out;
    std::string err;
    ASSERT_TRUE(parse_summary(format_summary(in), "x", &out, &err)) << err;
    EXPECT_EQ(out.epoch, 42u);
    EXPECT_DOUBLE_EQ(out.written, 1764500000.25);
    ASSERT_EQ(out.leaves.size(), 2u);
    EXPECT_EQ(out.leaves[0].name, "rack1");
    EXPECT_EQ(out.leaves[0].nodes, "n[1-4]");
    EXPECT_EQ(out.leaves[0].feature, "rack1");
    EXPECT_EQ(out.leaves[0].size, 4u);
    EXPECT_DOUBLE_EQ(out.leaves[0].uplink_load, 0.35);
    EXPECT_TRUE(out.leaves[0].accept);
    EXPECT_EQ(out.leaves[1].feature, "");  // "-" means none
    EXPECT_FALSE(out.leaves[1].accept);
    ASSERT_EQ(out.partitions.size(), 2u);
    EXPECT_EQ(out.partitions[0].name, "debug");
    EXPECT_TRUE(out.partitions[0].is_default);
    EXPECT_EQ(out.partitions[1].nodes, "n[1-4]");
    EXPECT_FALSE(out.partitions[1].is_default);
}

TEST(LeafSummary, UnknownLeafKeysAreIgnored) {
    Summary out;
    std::string err;
    const char* text = "harmonics-leaf-summary 1\nwritten 5\n"
                       "leaf r1 nodes=a[1-2] size=2 uplink_load=0.1 accept=1 jobs=3 # newer coordd\n";
    ASSERT_TRUE(parse_summary(text, "s", &out, &err)) << err;
    ASSERT_EQ(out.leaves.size(), 1u);
    EXPECT_EQ(out.leaves[0].feature, "");
}

TEST(LeafSummary, ErrorsNameFileLineAndKey) {
    Summary out;
    std::string err;
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nwritten 5\nleaf r1 nodes=a size=two uplink_load=0 accept=1\n",
                               "/run/h/summary", &out, &err));
    EXPECT_EQ(err, "/run/h/summary:3: size: not a node count: two");
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nwritten 5\nleaf r1 nodes=a size=2 accept=1\n", "f", &out, &err));
    EXPECT_EQ(err, "f:3: uplink_load: missing in leaf r1");
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 2\n", "f", &out, &err));
    EXPECT_EQ(err, "f:1: harmonics-leaf-summary: unsupported version 2");
    EXPECT_FALSE(parse_summary("", "f", &out, &err));
    EXPECT_NE(err.find("missing header"), std::string::npos);
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nepoch 1\n", "f", &out, &err));
    EXPECT_EQ(err, "f: written: missing");
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nwritten 1\nbogus 3\n", "f", &out, &err));
    EXPECT_EQ(err, "f:3: bogus: unknown record");
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nwritten 1\nleaf r nodes=a size=1 uplink_load=0 accept=1\n"
                               "leaf r nodes=b size=1 uplink_load=0 accept=1\n", "f", &out, &err));
    EXPECT_EQ(err, "f:4: leaf: duplicate leaf r");
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nwritten 1\nleaf r nodes=a size=1 uplink_load=0 accept=yes\n",
                               "f", &out, &err));
    EXPECT_EQ(err, "f:3: accept: expected 0 or 1: yes");
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nwritten 1\npartition p default=1\n", "f", &out, &err));
    EXPECT_EQ(err, "f:3: nodes: missing in partition p");
    EXPECT_FALSE(parse_summary("harmonics-leaf-summary 1\nwritten 1\npartition p nodes=a\npartition p nodes=b\n", "f",
                               &out, &err));
    EXPECT_EQ(err, "f:4: partition: duplicate partition p");
}

TEST(LeafSummary, WriterReplacesAtomicallyAndLeavesNoTemporary) {
    TempDir d;
    const std::string path = d.path + "/summary";
    std::string err;
    ASSERT_TRUE(write_summary(path, two_racks(1), &err)) << err;
    ASSERT_TRUE(write_summary(path, two_racks(2), &err)) << err;
    SummaryReader r(path);
    auto s = r.get(&err);
    ASSERT_TRUE(s) << err;
    EXPECT_EQ(s->epoch, 2u);
    // Only the summary itself is left in the directory.
    EXPECT_EQ(std::system(("test \"$(ls -A '" + d.path + "')\" = summary").c_str()), 0);
    EXPECT_FALSE(write_summary(d.path + "/no/such/dir/summary", two_racks(3), &err));
    EXPECT_NE(err.find("/no/such/dir/summary.tmp."), std::string::npos) << err;
}

TEST(LeafSummary, ReaderRereadsOnlyWhenTheFileChanges) {
    TempDir d;
    const std::string path = d.path + "/summary";
    std::string err;
    SummaryReader r(path);
    EXPECT_FALSE(r.get(&err));
    EXPECT_NE(err.find("No such file"), std::string::npos) << err;
    ASSERT_TRUE(write_summary(path, two_racks(7), &err));
    for (int i = 0; i < 5; ++i) {
        auto s = r.get(&err);
        ASSERT_TRUE(s) << err;
        EXPECT_EQ(s->epoch, 7u);
    }
    EXPECT_EQ(r.reads(), 1u);
    ASSERT_TRUE(write_summary(path, two_racks(8), &err));  // new inode
    EXPECT_EQ(r.get(&err)->epoch, 8u);
    EXPECT_EQ(r.reads(), 2u);
    // A bad file gives an error (kept cached, not re-parsed) ...
    spit(path, "harmonics-leaf-summary 1\nwritten x\n");
    EXPECT_FALSE(r.get(&err));
    EXPECT_EQ(err, path + ":2: written: expected unix seconds");
    err.clear();
    EXPECT_FALSE(r.get(&err));
    EXPECT_EQ(err, path + ":2: written: expected unix seconds");
    EXPECT_EQ(r.reads(), 3u);
    // ... and a good one replaces it.
    ASSERT_TRUE(write_summary(path, two_racks(9), &err));
    EXPECT_EQ(r.get(&err)->epoch, 9u);
}

TEST(LeafSummary, ReadersNeverSeeAPartialFile) {
    TempDir d;
    const std::string path = d.path + "/summary";
    std::string err;
    Summary big = two_racks(0);
    for (int i = 0; i < 200; ++i)
        big.leaves.push_back({"leaf" + std::to_string(i), "x[1-4]", "-", 4, 0.5, true});
    ASSERT_TRUE(write_summary(path, big, &err));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        std::string werr;
        for (uint64_t e = 1; e < 300; ++e) {
            big.epoch = e;
            if (!write_summary(path, big, &werr)) break;
        }
        stop = true;
    });
    SummaryReader r(path);
    int bad = 0, seen = 0;
    while (!stop) {
        std::string rerr;
        auto s = r.get(&rerr);
        if (!s || s->leaves.size() != big.leaves.size()) ++bad;
        ++seen;
    }
    writer.join();
    EXPECT_EQ(bad, 0);
    EXPECT_GT(seen, 0);
}

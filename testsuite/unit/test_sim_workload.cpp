// The workload CSV: a good file, and every kind of mistake reported with the
// file name, the line and the field.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "sim/workload.h"

using namespace harmonics;
using namespace harmonics::sim;

namespace {

Topology cluster() { return Topology::make_two_level(2, 4, 12.5e9, 2.0); }

// The error message of parsing `text` as "jobs.csv", or "" when it parses.
std::string error_of(const std::string& text) {
    try {
        parse_workload_text(text, "jobs.csv", cluster());
    } catch (const WorkloadError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(SimWorkload, ParsesJobsWithAndWithoutPlacement) {
    Topology t = cluster();
    auto jobs = parse_workload_text(
        "# id,arrival_s,model,nodes,gpus_per_node,iterations,placement\n"
        "id,arrival_s,model,nodes,gpus_per_node,iterations,placement\n"
        "1, 0, vgg16, 2, 8, 100, n[1,5]\n"
        "\n"
        "2,1.5,resnet50,3,4,50,\"n2,n3,n6\"\n"
        "3,2,bert-large,1,8,10\n",
        "jobs.csv", t);
    ASSERT_EQ(jobs.size(), 3u);
    EXPECT_EQ(jobs[0].id, 1);
    EXPECT_EQ(jobs[0].model, "vgg16");
    EXPECT_EQ(jobs[0].nodes, 2);
    EXPECT_EQ(jobs[0].iterations, 100);
    EXPECT_EQ(jobs[0].placement, (std::vector<NodeId>{t.find_node("n1"), t.find_node("n5")}));
    EXPECT_DOUBLE_EQ(jobs[1].arrival_s, 1.5);
    EXPECT_EQ(jobs[1].gpus_per_node, 4);
    EXPECT_EQ(jobs[1].placement.size(), 3u);
    EXPECT_TRUE(jobs[2].placement.empty());
}

TEST(SimWorkload, SplitKeepsCommasInsideBracketsAndQuotes) {
    EXPECT_EQ(split_csv_line("1, 0 ,x,n[1-2,5],\"a,b\""),
              (std::vector<std::string>{"1", "0", "x", "n[1-2,5]", "a,b"}));
}

TEST(SimWorkload, ErrorsNameFileLineAndField) {
    const std::string ok = "1,0,vgg16,2,8,100\n";
    EXPECT_EQ(error_of(ok + "2,0,vgg16,2,8\n"), "jobs.csv:2: line: expected 6 or 7 fields (id, arrival_s, model, "
                                                "nodes, gpus_per_node, iterations [, placement]), found 5");
    EXPECT_EQ(error_of(ok + "2,soon,vgg16,2,8,100\n"), "jobs.csv:2: arrival_s: 'soon' is not a time in seconds >= 0");
    EXPECT_EQ(error_of(ok + "2,-1,vgg16,2,8,100\n"), "jobs.csv:2: arrival_s: '-1' is not a time in seconds >= 0");
    EXPECT_EQ(error_of(ok + "\n# c\n2,0,alexnet,2,8,100\n"), "jobs.csv:4: model: unknown model 'alexnet'");
    EXPECT_EQ(error_of(ok + "2,0,vgg16,two,8,100\n"), "jobs.csv:2: nodes: 'two' is not an integer >= 1");
    EXPECT_EQ(error_of(ok + "2,0,vgg16,0,8,100\n"), "jobs.csv:2: nodes: '0' is not an integer >= 1");
    EXPECT_EQ(error_of(ok + "2,0,vgg16,9,8,100\n"), "jobs.csv:2: nodes: 9 nodes asked, the cluster has 8");
    EXPECT_EQ(error_of(ok + "2,0,vgg16,2,8,1.5\n"), "jobs.csv:2: iterations: '1.5' is not an integer >= 1");
    EXPECT_EQ(error_of(ok + "1,0,vgg16,2,8,100\n"), "jobs.csv:2: id: job 1 is defined twice");
    EXPECT_EQ(error_of(ok + "2,0,vgg16,2,8,100,n[1-2]x[\n").rfind("jobs.csv:2: placement: ", 0), 0u);
    EXPECT_EQ(error_of(ok + "2,0,vgg16,2,8,100,n[1,99]\n"), "jobs.csv:2: placement: unknown node 'n99'");
    EXPECT_EQ(error_of(ok + "2,0,vgg16,2,8,100,n1,n1\n").rfind("jobs.csv:2: ", 0), 0u);
    EXPECT_EQ(error_of(ok + "2,0,vgg16,2,8,100,\"n1,n1\"\n"), "jobs.csv:2: placement: node 'n1' given twice");
    EXPECT_EQ(error_of(ok + "2,0,vgg16,2,8,100,n[1-3]\n"), "jobs.csv:2: placement: names 3 nodes, the job has 2");
    EXPECT_EQ(error_of("# nothing\n"), "jobs.csv: no jobs");
}

TEST(SimWorkload, MissingFileIsNamed) {
    try {
        parse_workload_csv("/nonexistent/jobs.csv", cluster());
        FAIL() << "no error";
    } catch (const WorkloadError& e) {
        EXPECT_EQ(std::string(e.what()), "/nonexistent/jobs.csv:0: cannot open the workload file");
    }
}

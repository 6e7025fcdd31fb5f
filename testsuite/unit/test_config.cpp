#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "config/harmonics_conf.h"
#include "config/policy_options.h"
#include "policy/harmonics_local.h"
#include "config/units.h"
#include "topology/topology_conf.h"
#include "util/log.h"

using namespace harmonics;

static const std::string kData = std::string(HARMONICS_SRCDIR) + "/testsuite/data/conf/";

// The ConfigError a call throws (fails the test when none is thrown).
template <class F>
static ConfigError error_of(F f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError thrown";
    return ConfigError("", 0, "", "none");
}

static ConfigError conf_error(const std::string& text) {
    return error_of([&] { parse_harmonics_conf_text(text, "harmonics.conf"); });
}

// ---------------------------------------------------------------- units

TEST(ConfUnits, Bandwidths) {
    double b = 0;
    EXPECT_TRUE(parse_bandwidth("100Gbps", &b));
    EXPECT_DOUBLE_EQ(b, 12.5e9);
    EXPECT_TRUE(parse_bandwidth("25GB/s", &b));
    EXPECT_DOUBLE_EQ(b, 25e9);
    EXPECT_TRUE(parse_bandwidth("400Mbps", &b));
    EXPECT_DOUBLE_EQ(b, 50e6);
    EXPECT_TRUE(parse_bandwidth("1.6Tbps", &b));
    EXPECT_DOUBLE_EQ(b, 200e9);
    EXPECT_TRUE(parse_bandwidth("200Gb/s", &b));
    EXPECT_DOUBLE_EQ(b, 25e9);
    EXPECT_TRUE(parse_bandwidth("1000000", &b));
    EXPECT_DOUBLE_EQ(b, 1e6);
    for (const char* badv : {"20Gbs", "", "Gbps", "-5Gbps", "0", "100 Gbps", "100mbps", "0x10", "inf"})
        EXPECT_FALSE(parse_bandwidth(badv, &b)) << badv;
}

TEST(ConfUnits, Durations) {
    double s = 0;
    EXPECT_TRUE(parse_duration("500ms", &s));
    EXPECT_DOUBLE_EQ(s, 0.5);
    EXPECT_TRUE(parse_duration("2s", &s));
    EXPECT_DOUBLE_EQ(s, 2);
    EXPECT_TRUE(parse_duration("5min", &s));
    EXPECT_DOUBLE_EQ(s, 300);
    EXPECT_TRUE(parse_duration("250us", &s));
    EXPECT_DOUBLE_EQ(s, 250e-6);
    EXPECT_TRUE(parse_duration("3", &s));
    EXPECT_DOUBLE_EQ(s, 3);
    for (const char* badv : {"5m", "1 s", "-1s", "ms", "2sec s", "1d"}) EXPECT_FALSE(parse_duration(badv, &s)) << badv;
}

TEST(ConfUnits, BooleansAndSizes) {
    bool v = false;
    for (const char* t : {"1", "yes", "TRUE", "On"}) {
        v = false;
        EXPECT_TRUE(parse_bool(t, &v));
        EXPECT_TRUE(v) << t;
    }
    for (const char* f : {"0", "No", "false", "off"}) {
        v = true;
        EXPECT_TRUE(parse_bool(f, &v));
        EXPECT_FALSE(v) << f;
    }
    EXPECT_FALSE(parse_bool("2", &v));
    EXPECT_FALSE(parse_bool("", &v));
    std::size_t b = 0;
    EXPECT_TRUE(parse_size("1MiB", &b));
    EXPECT_EQ(b, 1048576u);
    EXPECT_TRUE(parse_size("64KB", &b));
    EXPECT_EQ(b, 64000u);
    EXPECT_FALSE(parse_size("1.5B", &b));
}

TEST(ConfUnits, FormatsForMessages) {
    EXPECT_EQ(format_bandwidth(12.5e9), "100Gbps");
    EXPECT_EQ(format_duration(0.25), "250ms");
    EXPECT_EQ(format_duration(300), "5min");
    EXPECT_EQ(format_duration(250e-6), "250us");
}

// ------------------------------------------------------- harmonics.conf

TEST(HarmonicsConf, DefaultsWhenEmpty) {
    HarmonicsConfig c = parse_harmonics_conf_text("# nothing\n\n", "/etc/harmonics/harmonics.conf");
    EXPECT_EQ(c.topology_file, "/etc/slurm/topology.conf");
    EXPECT_DOUBLE_EQ(c.node_Bps, 12.5e9);
    EXPECT_DOUBLE_EQ(c.oversubscription, 1.0);
    EXPECT_DOUBLE_EQ(c.max_stretch, 1.05);
    EXPECT_EQ(c.coord_socket, "/run/harmonics/coordd.sock");
    EXPECT_EQ(c.state_file, "/run/harmonics/leaves.state");
    EXPECT_EQ(c.sched_port, 6828);
    EXPECT_EQ(c.log_level, LogLevel::Info);
    EXPECT_TRUE(c.gate);
    EXPECT_DOUBLE_EQ(c.gate_cap_s, 0);  // one period
    EXPECT_TRUE(c.switches.empty());
}

TEST(HarmonicsConf, ParsesEveryKindOfValue) {
    HarmonicsConfig c = parse_harmonics_conf_text(
        "NodeBandwidth=200Gbps oversubscription=3 # 3:1 racks\n"
        "EPOCH=5s Slot=250us ChangeThreshold=0.1 LocalBudget=2ms MaxStretch=1.2\n"
        "SchedPort=7000 CoordAddress=ctl1:7100 CoordSocket=/tmp/h/coordd.sock\n"
        "StateFile=/tmp/h/leaves.state StateMaxAge=2min SwitchWait=30s AdminCommentInterval=5s\n"
        "LogFile=\"/var/log/harmonics x.log\" LogLevel=warning SlurmUser=root GateCap=20ms\n"
        "ClockTolerance=50us Steering=no Gate=0 Policy=Cassini SolverTimeLimit=30s Seed=7 \\\n"
        "   CoordRounds=5 MaxFrameSize=4MiB ReportInterval=500ms ConnectTimeout=1s\n",
        "/etc/harmonics/harmonics.conf");
    EXPECT_DOUBLE_EQ(c.node_Bps, 25e9);
    EXPECT_DOUBLE_EQ(c.oversubscription, 3);
    EXPECT_DOUBLE_EQ(c.epoch_s, 5);
    EXPECT_DOUBLE_EQ(c.slot_s, 250e-6);
    EXPECT_DOUBLE_EQ(c.change_threshold, 0.1);
    EXPECT_DOUBLE_EQ(c.local_budget_s, 0.002);
    EXPECT_DOUBLE_EQ(c.max_stretch, 1.2);
    EXPECT_EQ(c.sched_port, 7000);
    EXPECT_EQ(c.coord_address, "ctl1:7100");
    EXPECT_EQ(c.coord_socket, "/tmp/h/coordd.sock");
    EXPECT_EQ(c.state_file, "/tmp/h/leaves.state");
    EXPECT_DOUBLE_EQ(c.state_max_age_s, 120);
    EXPECT_DOUBLE_EQ(c.switch_wait_s, 30);
    EXPECT_DOUBLE_EQ(c.admin_comment_interval_s, 5);
    EXPECT_EQ(c.log_file, "/var/log/harmonics x.log");
    EXPECT_EQ(c.log_level, LogLevel::Warning);
    EXPECT_EQ(c.slurm_user, "root");
    EXPECT_DOUBLE_EQ(c.gate_cap_s, 0.02);
    EXPECT_DOUBLE_EQ(c.clock_tolerance_s, 50e-6);
    EXPECT_FALSE(c.steering);
    EXPECT_FALSE(c.gate);
    EXPECT_EQ(c.policy, "cassini");
    EXPECT_DOUBLE_EQ(c.solver_time_limit_s, 30);
    EXPECT_EQ(c.seed, 7u);
    EXPECT_EQ(c.coord_rounds, 5);
    EXPECT_EQ(c.max_frame_bytes, 4u << 20);
    EXPECT_DOUBLE_EQ(c.report_interval_s, 0.5);
    EXPECT_DOUBLE_EQ(c.connect_timeout_s, 1);
}

TEST(HarmonicsConf, RelativeTopologyFileIsResolvedAgainstTheConfFolder) {
    EXPECT_EQ(parse_harmonics_conf_text("TopologyFile=topo.conf\n", "/etc/harmonics/harmonics.conf").topology_file,
              "/etc/harmonics/topo.conf");
    EXPECT_EQ(parse_harmonics_conf_text("TopologyFile=/x/topo.conf\n", "/etc/harmonics/harmonics.conf").topology_file,
              "/x/topo.conf");
}

TEST(HarmonicsConf, SwitchLinesAcceptHostlists) {
    HarmonicsConfig c = parse_harmonics_conf_text("SwitchName=rack[1-3] Uplink=200Gbps\n", "h.conf");
    ASSERT_EQ(c.switches.size(), 3u);
    EXPECT_EQ(c.switches[2].name, "rack3");
    EXPECT_DOUBLE_EQ(c.switches[2].uplink_Bps, 25e9);
    EXPECT_EQ(c.switches[2].line, 1);
    EXPECT_EQ(c.find_switch("rack4"), nullptr);
}

TEST(HarmonicsConf, SwitchDescribedOverSeveralLines) {
    HarmonicsConfig c = parse_harmonics_conf_text(
        "SwitchName=rack[1-2] Uplink=200Gbps\nSwitchName=rack2 Schedd=h2 Downlink=100Gbps\n", "h.conf");
    ASSERT_EQ(c.switches.size(), 2u);
    const SwitchConfig* r2 = c.find_switch("rack2");
    ASSERT_NE(r2, nullptr);
    EXPECT_DOUBLE_EQ(r2->uplink_Bps, 25e9);
    EXPECT_DOUBLE_EQ(r2->downlink_Bps, 12.5e9);
    EXPECT_EQ(r2->schedd, "h2");
    EXPECT_EQ(r2->line, 1);
    EXPECT_EQ(c.find_switch("rack1")->schedd, "");
}

TEST(HarmonicsConf, BadBandwidthMessageNamesFileLineAndKey) {
    ConfigError e = error_of([] { parse_harmonics_conf(kData + "bad-bandwidth.conf"); });
    EXPECT_EQ(e.file(), kData + "bad-bandwidth.conf");
    EXPECT_EQ(e.line(), 12);
    EXPECT_EQ(e.key(), "Uplink");
    EXPECT_EQ(std::string(e.what()),
              kData + "bad-bandwidth.conf:12: key 'Uplink': bad bandwidth '20Gbs' (use e.g. 100Gbps, 25GB/s)");
}

TEST(HarmonicsConf, UnknownKeyIsAnError) {
    ConfigError e = error_of([] { parse_harmonics_conf(kData + "bad-unknown-key.conf"); });
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.key(), "EpochLength");
    EXPECT_NE(std::string(e.what()).find("unknown key"), std::string::npos) << e.what();
}

// Each bad text: the line and key named, and a word of the problem.
struct BadConf {
    const char* text;
    int line;
    const char* key;
    const char* problem;
};

TEST(HarmonicsConf, EachBadValueNamesLineAndKey) {
    const BadConf cases[] = {
        {"Epoch=1s\nSlot=2parsecs\n", 2, "Slot", "bad duration '2parsecs' (use e.g. 500ms, 2s, 5min, 250us)"},
        {"Gate=maybe\n", 1, "Gate", "bad boolean 'maybe'"},
        {"Oversubscription=0.5\n", 1, "Oversubscription", "at least 1"},
        {"Oversubscription=two\n", 1, "Oversubscription", "bad ratio"},
        {"MaxStretch=0.9\n", 1, "MaxStretch", "between 1"},
        {"ChangeThreshold=150%\n", 1, "ChangeThreshold", "[0, 1)"},
        {"Guard=60%\n", 1, "Guard", "[0, 0.5)"},
        {"Guard=lots\n", 1, "Guard", "bad fraction"},
        {"SchedPort=70000\n", 1, "SchedPort", "bad port"},
        {"CoordAddress=ctl1\n", 1, "CoordAddress", "use host:port"},
        {"CoordSocket=run/c.sock\n", 1, "CoordSocket", "must be absolute"},
        {"LogLevel=loud\n", 1, "LogLevel", "bad log level"},
        {"Policy=fifo\n", 1, "Policy", "bad policy"},
        {"MaxFrameSize=10\n", 1, "MaxFrameSize", "between 1KiB"},
        {"NodeBandwidth=\n", 1, "NodeBandwidth", "bad bandwidth ''"},
        {"# dup\nEpoch=1s\n\nepoch=2s\n", 4, "epoch", "given twice (first at line 2)"},
        {"Uplink=100Gbps\n", 1, "Uplink", "belongs on a SwitchName line"},
        {"SwitchName=rack1 Epoch=1s\n", 1, "Epoch", "is a global key"},
        {"SwitchName=rack1 Speed=1\n", 1, "Speed", "unknown key on a SwitchName line"},
        {"SwitchName=rack1\n", 1, "SwitchName", "without Uplink"},
        {"SwitchName=rack1 Nodes=n[1-4]\n", 1, "Nodes", "belongs in Slurm's topology.conf"},
        {"SwitchName=rack[2-1] Uplink=1Gbps\n", 1, "SwitchName", "starts after it ends"},
        {"SwitchName=rack[1-2] Schedd=h:1\n", 1, "Schedd", "one harmonics-schedd per leaf"},
        {"SwitchName=rack1 Schedd=h:port\n", 1, "Schedd", "bad address"},
        {"SwitchName=rack1 Uplink=1Gbps\nSwitchName=rack[0-1] Uplink=2Gbps\n", 2, "Uplink",
         "switch 'rack1' already has one (line 1)"},
        {"SwitchName=rack1 Uplink=1Gbps uplink=2Gbps\n", 1, "uplink", "given twice on one line"},
        {"Epoch=1s SwitchName=rack1\n", 1, "SwitchName", "must start its line"},
        {"Epoch=10ms\nSlot=10ms\n", 2, "Slot", "shorter than Epoch"},
        {"Epoch=1ms\n", 1, "Epoch", "Slot (1ms) must be shorter than Epoch (1ms)"},
        {"Epoch=100ms LocalBudget=200ms\n", 1, "LocalBudget", "shorter than Epoch"},
    };
    for (const BadConf& c : cases) {
        ConfigError e = conf_error(c.text);
        EXPECT_EQ(e.file(), "harmonics.conf") << c.text;
        EXPECT_EQ(e.line(), c.line) << c.text << " -> " << e.what();
        EXPECT_EQ(e.key(), c.key) << c.text << " -> " << e.what();
        EXPECT_NE(e.problem().find(c.problem), std::string::npos) << c.text << " -> " << e.what();
    }
}

TEST(HarmonicsConf, SyntaxErrorsNameTheLine) {
    ConfigError e = conf_error("Epoch=1s\nthis is not a pair\n");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.key(), "");
    EXPECT_EQ(std::string(e.what()), "harmonics.conf:2: expected Key=Value, found 'this'");
    e = conf_error("LogFile=\"/tmp/x\n");
    EXPECT_NE(std::string(e.what()).find("unterminated"), std::string::npos);
    e = conf_error("=5\n");
    EXPECT_NE(std::string(e.what()).find("missing key"), std::string::npos);
}

TEST(HarmonicsConf, MissingFileIsAConfigError) {
    ConfigError e = error_of([] { parse_harmonics_conf(kData + "no-such.conf"); });
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos);
}

// ------------------------------------------------------- topology.conf

struct BadTopology {
    const char* file;
    int line;
    const char* key;
    const char* problem;
};

TEST(TopologyConf, EachBadFileNamesLineAndProblem) {
    const BadTopology cases[] = {
        {"topo-unknown-switch.conf", 3, "Switches", "unknown switch 'rack3'"},
        {"topo-node-two-leaves.conf", 3, "Nodes", "node 'n4' is under two leaf switches: 'rack1' (line 1) and 'rack2'"},
        {"topo-two-parents.conf", 4, "Switches", "switch 'rack2' has two parents: 'pod1' (line 3) and 'pod2'"},
        {"topo-bad-hostlist.conf", 2, "Nodes", "range '8-5' starts after it ends"},
        {"topo-loop.conf", 2, "Switches", "loop in the switch tree: a -> b -> a"},
        {"topo-no-switches.conf", 0, "", "no switches"},
        {"topo-unknown-key.conf", 2, "Node", "unknown key"},
        {"topo-two-tops.conf", 4, "SwitchName", "'rack3' and 'spine' have no common parent"},
        {"topo-duplicate-switch.conf", 2, "SwitchName", "'rack1' defined twice (first at line 1)"},
    };
    HarmonicsConfig cfg;
    for (const BadTopology& c : cases) {
        std::string path = kData + c.file;
        ConfigError e = error_of([&] { parse_topology_conf(path, cfg); });
        EXPECT_EQ(e.file(), path);
        EXPECT_EQ(e.line(), c.line) << c.file << ": " << e.what();
        EXPECT_EQ(e.key(), c.key) << c.file << ": " << e.what();
        EXPECT_NE(e.problem().find(c.problem), std::string::npos) << c.file << ": " << e.what();
    }
}

TEST(TopologyConf, MoreMistakesInText) {
    HarmonicsConfig cfg;
    auto err = [&](const std::string& text) {
        return error_of([&] { parse_topology_conf_text(text, "topology.conf", cfg); });
    };
    ConfigError e = err("Nodes=n1 SwitchName=a\n");
    EXPECT_EQ(e.key(), "Nodes");
    EXPECT_NE(e.problem().find("must start with SwitchName"), std::string::npos);
    e = err("SwitchName=a\n");
    EXPECT_NE(e.problem().find("neither Nodes= nor Switches="), std::string::npos);
    e = err("SwitchName=a Nodes=n1\nSwitchName=b Switches=n1\n");
    EXPECT_NE(e.problem().find("'n1' is a node, not a switch"), std::string::npos);
    e = err("SwitchName=a Nodes=n1,a\n");
    EXPECT_NE(e.problem().find("name of a switch"), std::string::npos);
    e = err("SwitchName=a Switches=a\n");
    EXPECT_NE(e.problem().find("loop in the switch tree: a -> a"), std::string::npos);
    e = err("SwitchName=a Nodes=n[1-2],n2\n");
    EXPECT_NE(e.problem().find("listed twice"), std::string::npos);
    EXPECT_EQ(std::string(err("\n\nSwitchName=r Nodes=n[1-2] Nodes=n3\n").what()),
              "topology.conf:3: key 'Nodes': given twice on one line");
}

// A multi-level good configuration: tree, capacities (explicit and derived
// from the oversubscription ratio), paths and schedd addresses.
class ThreeLevelConf : public ::testing::Test {
protected:
    void SetUp() override {
        cfg = parse_harmonics_conf(kData + "three-level.harmonics.conf");
        topo = load_topology(cfg);
    }
    double up(const char* s) const { return topo.link(topo.sw(topo.find_switch(s)).up).capacity_Bps; }
    double down(const char* s) const { return topo.link(topo.sw(topo.find_switch(s)).down).capacity_Bps; }
    HarmonicsConfig cfg;
    Topology topo;
};

TEST_F(ThreeLevelConf, ConfigValues) {
    EXPECT_EQ(cfg.topology_file, kData + "three-level.topology.conf");
    EXPECT_DOUBLE_EQ(cfg.epoch_s, 2);
    EXPECT_DOUBLE_EQ(cfg.slot_s, 500e-6);
    EXPECT_DOUBLE_EQ(cfg.change_threshold, 0.05);
    EXPECT_DOUBLE_EQ(cfg.local_budget_s, 0.02);
    EXPECT_DOUBLE_EQ(cfg.max_stretch, 1.1);
    EXPECT_FALSE(cfg.gate);
    EXPECT_EQ(cfg.log_level, LogLevel::Debug);
}

TEST_F(ThreeLevelConf, Tree) {
    ASSERT_TRUE(topo.finalized());
    EXPECT_EQ(topo.nodes().size(), 16u);
    EXPECT_EQ(topo.switches().size(), 7u);
    EXPECT_EQ(topo.leaves().size(), 4u);
    SwitchId core = topo.find_switch("core"), pod2 = topo.find_switch("pod2"), rack3 = topo.find_switch("rack3");
    EXPECT_EQ(topo.sw(core).level, 2);
    EXPECT_EQ(topo.sw(pod2).level, 1);
    EXPECT_EQ(topo.sw(rack3).level, 0);
    EXPECT_EQ(topo.sw(rack3).parent, pod2);
    EXPECT_EQ(topo.sw(pod2).parent, core);
    EXPECT_EQ(topo.sw(core).parent, -1);
    EXPECT_EQ(topo.node(topo.find_node("n09")).leaf, rack3);
    EXPECT_EQ(topo.sw(core).up, -1);  // the top has no uplink
    // 16 NICs x 2 + 6 non-top switches x 2.
    EXPECT_EQ(topo.links().size(), 44u);
}

TEST_F(ThreeLevelConf, Capacities) {
    EXPECT_DOUBLE_EQ(topo.link(topo.node(topo.find_node("n01")).up).capacity_Bps, 12.5e9);
    EXPECT_DOUBLE_EQ(up("rack1"), 25e9);       // Uplink=25GB/s
    EXPECT_DOUBLE_EQ(down("rack1"), 18.75e9);  // Downlink=150Gbps
    EXPECT_DOUBLE_EQ(up("rack2"), 25e9);       // 4 x 100Gbps / 2
    EXPECT_DOUBLE_EQ(down("rack2"), 25e9);     // downlink follows the uplink
    EXPECT_DOUBLE_EQ(up("rack4"), 25e9);
    EXPECT_DOUBLE_EQ(up("pod1"), 25e9);        // (25 + 25) GB/s / 2
    EXPECT_DOUBLE_EQ(up("pod2"), 50e9);        // Uplink=400Gbps
    EXPECT_DOUBLE_EQ(down("pod2"), 50e9);
}

TEST_F(ThreeLevelConf, Paths) {
    auto names = [&](const char* a, const char* b) {
        std::string s;
        for (LinkId l : topo.path(topo.find_node(a), topo.find_node(b))) s += topo.link(l).name + " ";
        return s;
    };
    EXPECT_EQ(names("n01", "n02"), "n01:up n02:down ");
    EXPECT_EQ(names("n01", "n05"), "n01:up rack1:uplink rack2:downlink n05:down ");
    EXPECT_EQ(names("n01", "n16"), "n01:up rack1:uplink pod1:uplink pod2:downlink rack4:downlink n16:down ");
}

TEST_F(ThreeLevelConf, LeafAndScheddLookup) {
    SwitchId rack1 = topo.find_switch("rack1"), rack2 = topo.find_switch("rack2");
    EXPECT_EQ(leaf_of_host(topo, "n03"), rack1);
    EXPECT_EQ(leaf_of_host(topo, "n05.cluster.example"), rack2);
    EXPECT_EQ(leaf_of_host(topo, "n99"), -1);
    EXPECT_EQ(leaf_of_host(topo, "rack1"), -1);
    EXPECT_EQ(schedd_address(cfg, topo, rack1), "leaf1.example:7001");
    EXPECT_EQ(schedd_address(cfg, topo, rack2), "leaf2.example:6828");  // SchedPort fills in
    EXPECT_EQ(schedd_address(cfg, topo, topo.find_switch("rack3")), "");
    EXPECT_EQ(schedd_address(cfg, topo, -1), "");
}

TEST(TopologyConf, HarmonicsConfMismatchesNameHarmonicsConfLine) {
    struct Case {
        const char* file;
        int line;
        const char* key;
        const char* problem;
    } cases[] = {
        {"bad-switch-not-in-topology.conf", 3, "SwitchName", "switch 'rack9' is not in"},
        {"bad-schedd-on-spine.conf", 2, "Schedd", "'pod1' has no nodes"},
        {"bad-uplink-on-top.conf", 2, "Uplink", "'core' is the top of the tree"},
    };
    for (const Case& c : cases) {
        HarmonicsConfig cfg = parse_harmonics_conf(kData + c.file);
        ConfigError e = error_of([&] { load_topology(cfg); });
        EXPECT_EQ(e.file(), kData + c.file);
        EXPECT_EQ(e.line(), c.line) << e.what();
        EXPECT_EQ(e.key(), c.key) << e.what();
        EXPECT_NE(e.problem().find(c.problem), std::string::npos) << e.what();
    }
    HarmonicsConfig cfg = parse_harmonics_conf(kData + "bad-missing-topology.conf");
    ConfigError e = error_of([&] { load_topology(cfg); });
    EXPECT_EQ(e.file(), kData + "bad-missing-topology.conf");
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.key(), "TopologyFile");
    EXPECT_EQ(e.problem(), "cannot read '" + kData + "does-not-exist.conf': No such file or directory");
    // Straight to the parser, the missing file itself is named.
    e = error_of([&] { parse_topology_conf(kData + "does-not-exist.conf", cfg); });
    EXPECT_EQ(e.file(), kData + "does-not-exist.conf");
    EXPECT_EQ(e.line(), 0);
    // The default path is marked as such.
    HarmonicsConfig dflt = parse_harmonics_conf_text("TopologyFile=/nonexistent/topology.conf\n", "/x/h.conf");
    dflt.topology_file_line = 0;
    e = error_of([&] { load_topology(dflt); });
    EXPECT_NE(e.problem().find("(the default)"), std::string::npos) << e.what();
}

TEST(TopologyConf, SingleRackIsItsOwnTop) {
    HarmonicsConfig cfg;
    Topology t = parse_topology_conf_text("SwitchName=rack1 Nodes=n[1-4]\n", "t.conf", cfg);
    EXPECT_EQ(t.leaves().size(), 1u);
    EXPECT_EQ(t.sw(0).up, -1);
    EXPECT_EQ(t.path(0, 3).size(), 2u);
}

// The shipped examples parse and describe the clusters they claim to.
TEST(ConfExamples, MiniClusterAndTestbed) {
    std::string etc = std::string(HARMONICS_SRCDIR) + "/etc/";
    HarmonicsConfig mini = parse_harmonics_conf(etc + "harmonics.conf");
    Topology t = parse_topology_conf(etc + "topology.conf", mini);
    EXPECT_EQ(t.nodes().size(), 8u);
    EXPECT_EQ(t.leaves().size(), 2u);
    EXPECT_EQ(leaf_of_host(t, "n5"), t.find_switch("rack2"));
    EXPECT_FALSE(schedd_address(mini, t, t.find_switch("rack1")).empty());
    EXPECT_NE(schedd_address(mini, t, t.find_switch("rack1")), schedd_address(mini, t, t.find_switch("rack2")));

    HarmonicsConfig bed = parse_harmonics_conf(etc + "testbed/harmonics.conf");
    Topology b = load_topology(bed);
    EXPECT_EQ(b.nodes().size(), 24u);
    EXPECT_EQ(b.leaves().size(), 3u);
    for (SwitchId leaf : b.leaves()) EXPECT_FALSE(schedd_address(bed, b, leaf).empty());
}

// ------------------------------------------------------------- logging

static std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

TEST(LogUtil, FileDestinationLevelsAndWholeLines) {
    char dir[] = "/tmp/harmonics-log-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string path = std::string(dir) + "/test.log";
    ASSERT_TRUE(log_open("harmonics-test", path, LogLevel::Info));
    HLOG_INFO("leaf %s epoch %d", "rack1", 7);
    HLOG_DEBUG("hidden %d", 1);
    HLOG_ERROR("bad frame from %s", "n3");
    // Several threads: every line arrives whole.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([t] {
            for (int i = 0; i < 200; ++i) HLOG_WARN("thread %d line %d %s", t, i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        });
    for (auto& th : threads) th.join();
    log_set_level(LogLevel::Debug);
    HLOG_DEBUG("shown %d", 2);
    log_close();
    std::string text = slurp(path);
    EXPECT_NE(text.find("harmonics-test["), std::string::npos);
    EXPECT_NE(text.find(": info: leaf rack1 epoch 7\n"), std::string::npos);
    EXPECT_NE(text.find(": error: bad frame from n3\n"), std::string::npos);
    EXPECT_EQ(text.find("hidden"), std::string::npos);
    EXPECT_NE(text.find(": debug: shown 2\n"), std::string::npos);
    std::istringstream lines(text);
    std::string line;
    int warn = 0;
    while (std::getline(lines, line))
        if (line.find(": warning: thread ") != std::string::npos) {
            ++warn;
            EXPECT_EQ(line.substr(line.size() - 36), std::string(36, 'x'));
        }
    EXPECT_EQ(warn, 800);
    std::remove(path.c_str());
    rmdir(dir);
}

TEST(LogUtil, UnwritableFileKeepsThePreviousDestination) {
    EXPECT_FALSE(log_open("x", "/nonexistent-dir/x.log", LogLevel::Info));
    LogLevel l;
    EXPECT_TRUE(parse_log_level("WARN", &l));
    EXPECT_EQ(l, LogLevel::Warning);
    EXPECT_FALSE(parse_log_level("verbose", &l));
    EXPECT_STREQ(log_level_name(LogLevel::Debug), "debug");
}

// ------------------------------------------------------------ documentation

// Every key the parser takes is documented in harmonics.conf(5), and the
// documented defaults of a few keys match the code's.
TEST(HarmonicsConfDocs, ManPageDocumentsEveryKey) {
    std::string man = slurp(std::string(HARMONICS_SRCDIR) + "/doc/harmonics.conf.5");
    ASSERT_FALSE(man.empty());
    for (const std::string& k : harmonics_conf_keys())
        EXPECT_NE(man.find(".BI " + k + "= "), std::string::npos) << k << " is not documented";
}

TEST(HarmonicsConfDocs, PolicyOptionsComeFromTheConfig) {
    HarmonicsConfig c = parse_harmonics_conf_text(
        "Slot=2ms ChangeThreshold=0.1 LocalBudget=5ms SolverTimeLimit=1min Seed=9 Guard=3% MaxStretch=1.1 "
        "DriftHorizon=10s", "h.conf");
    PolicyOptions o = policy_options(c);
    EXPECT_DOUBLE_EQ(o.drift_horizon_s, 10);
    EXPECT_DOUBLE_EQ(local_tuning(o).horizon_s, 10);
    EXPECT_DOUBLE_EQ(local_tuning(PolicyOptions{}).horizon_s, LocalTuning{}.horizon_s);
    EXPECT_DOUBLE_EQ(o.guard, 0.03);
    EXPECT_NEAR(o.max_stretch, 0.1, 1e-12);
    EXPECT_DOUBLE_EQ(o.slot_s, 0.002);
    EXPECT_DOUBLE_EQ(o.change_threshold, 0.1);
    EXPECT_DOUBLE_EQ(o.local_budget_s, 0.005);
    EXPECT_DOUBLE_EQ(o.time_limit_s, 60);
    EXPECT_EQ(o.seed, 9u);
}

// Written back and parsed again, a configuration keeps every value; every
// documented key appears in the text.
TEST(HarmonicsConf, FormatParsesBackToTheSameValues) {
    HarmonicsConfig a = parse_harmonics_conf(kData + "three-level.harmonics.conf");
    a.log_file = "/var/log/h x.log";
    a.munge_socket = "/run/munge/munge.socket.2";
    a.drift_horizon_s = 2.5;
    std::string text = format_harmonics_conf(a);
    for (const std::string& k : harmonics_conf_keys()) EXPECT_NE(text.find(k + "="), std::string::npos) << k;
    HarmonicsConfig b = parse_harmonics_conf_text(text, "/elsewhere/harmonics.conf");
    EXPECT_EQ(b.topology_file, a.topology_file);  // absolute already
    EXPECT_DOUBLE_EQ(b.node_Bps, a.node_Bps);
    EXPECT_DOUBLE_EQ(b.oversubscription, a.oversubscription);
    EXPECT_DOUBLE_EQ(b.epoch_s, a.epoch_s);
    EXPECT_DOUBLE_EQ(b.slot_s, a.slot_s);
    EXPECT_DOUBLE_EQ(b.change_threshold, a.change_threshold);
    EXPECT_DOUBLE_EQ(b.local_budget_s, a.local_budget_s);
    EXPECT_DOUBLE_EQ(b.max_stretch, a.max_stretch);
    EXPECT_DOUBLE_EQ(b.drift_horizon_s, 2.5);
    EXPECT_DOUBLE_EQ(b.gate_cap_s, a.gate_cap_s);
    EXPECT_DOUBLE_EQ(b.switch_wait_s, a.switch_wait_s);
    EXPECT_EQ(b.gate, a.gate);
    EXPECT_EQ(b.log_level, a.log_level);
    EXPECT_EQ(b.log_file, a.log_file);
    EXPECT_EQ(b.munge_socket, a.munge_socket);
    EXPECT_EQ(b.max_frame_bytes, a.max_frame_bytes);
    ASSERT_EQ(b.switches.size(), a.switches.size());
    for (std::size_t i = 0; i < a.switches.size(); ++i) {
        EXPECT_EQ(b.switches[i].name, a.switches[i].name);
        EXPECT_DOUBLE_EQ(b.switches[i].uplink_Bps, a.switches[i].uplink_Bps);
        EXPECT_DOUBLE_EQ(b.switches[i].downlink_Bps, a.switches[i].downlink_Bps);
        EXPECT_EQ(b.switches[i].schedd, a.switches[i].schedd);
    }
}

TEST(LogUtil, StderrIsTheDefaultDestination) {
    ASSERT_TRUE(log_open("harmonics-coordd", "stderr", LogLevel::Warning));
    testing::internal::CaptureStderr();
    HLOG_INFO("not shown");
    HLOG_WARN("leaf %s late by %.1f ms", "rack2", 3.5);
    std::string err = testing::internal::GetCapturedStderr();
    log_close();
    EXPECT_EQ(err.find("not shown"), std::string::npos);
    EXPECT_NE(err.find(" harmonics-coordd["), std::string::npos) << err;
    EXPECT_NE(err.find("]: warning: leaf rack2 late by 3.5 ms\n"), std::string::npos) << err;
}

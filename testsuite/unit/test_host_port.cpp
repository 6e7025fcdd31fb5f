// host:port, the one grammar behind harmonics.conf's Schedd= and CoordAddress,
// the daemons' --listen and the wire client: forms, and a reason for each
// refusal that the config error carries with its file, line and key.
#include <gtest/gtest.h>

#include "config/harmonics_conf.h"
#include "util/host_port.h"

using namespace harmonics;

TEST(HostPort, Forms) {
    std::string host;
    int port = 0;
    ASSERT_TRUE(split_host_port("ctl1:6829", &host, &port));
    EXPECT_EQ(host, "ctl1");
    EXPECT_EQ(port, 6829);
    ASSERT_TRUE(split_host_port("[::1]:7000", &host, &port));
    EXPECT_EQ(host, "::1");
    EXPECT_EQ(port, 7000);
    ASSERT_TRUE(split_host_port("10.0.0.1:65535", &host, &port));
    EXPECT_EQ(port, 65535);
}

TEST(HostPort, EachRefusalSaysWhy) {
    const struct {
        const char* addr;
        const char* why;
    } cases[] = {
        {"ctl1", "no port"},          {"ctl1:", "no port"},
        {":6829", "no host"},         {"[]:6829", "no host"},
        {"::1:7000", "brackets"},     {"[::1]7000", "no port after ']'"},
        {"[::1:7000", "without ']'"}, {"h:0", "1 to 65535"},
        {"h:65536", "1 to 65535"},    {"h:12x", "1 to 65535"},
        {"h:+5", "1 to 65535"},       {"h: 5", "1 to 65535"},
        {"h:99999999999999999999", "1 to 65535"},
    };
    for (const auto& c : cases) {
        std::string host = "untouched", why;
        int port = -1;
        EXPECT_FALSE(split_host_port(c.addr, &host, &port, &why)) << c.addr;
        EXPECT_NE(why.find(c.why), std::string::npos) << c.addr << " -> " << why;
        EXPECT_EQ(host, "untouched") << c.addr;
        EXPECT_EQ(port, -1) << c.addr;
        EXPECT_FALSE(split_host_port(c.addr, &host, &port)) << c.addr;  // why is optional
    }
}

TEST(HostPort, ConfigErrorNamesFileLineKeyAndReason) {
    try {
        parse_harmonics_conf_text("Epoch=1s\nSwitchName=rack1 Schedd=[::1]6829\n", "h.conf");
        FAIL() << "accepted a bad Schedd=";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.file(), "h.conf");
        EXPECT_EQ(e.line(), 2);
        EXPECT_EQ(e.key(), "Schedd");
        EXPECT_NE(e.problem().find("no port after ']'"), std::string::npos) << e.what();
        EXPECT_NE(e.problem().find("use host or host:port"), std::string::npos) << e.what();
    }
    try {
        parse_harmonics_conf_text("CoordAddress=ctl1:http\n", "h.conf");
        FAIL() << "accepted a bad CoordAddress=";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.line(), 1);
        EXPECT_EQ(e.key(), "CoordAddress");
        EXPECT_NE(e.problem().find("port 'http'"), std::string::npos) << e.what();
    }
    // A Schedd= host without a port is fine: it gets SchedPort.
    EXPECT_NO_THROW(parse_harmonics_conf_text("SwitchName=rack1 Schedd=h1\n", "h.conf"));
}

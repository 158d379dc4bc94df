// torchrun's CLI as coretrain run parses it: names in both spellings, defaults, PET_ variables under the
// command line, and one-line errors naming the flag or variable.
#include "launch/launch_args.h"

#include <gtest/gtest.h>

#include <map>

#include "core/error.h"

namespace ct::launch {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* k) -> const char* {
      auto it = vars.find(k);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

LaunchArgs parse(std::vector<std::string> argv, const FakeEnv& env = {}) {
  return parse_launch_args(argv, env.lookup());
}

std::string error_of(std::vector<std::string> argv, const FakeEnv& env = {}) {
  try {
    parse(std::move(argv), env);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchArgs, TorchrunDefaults) {
  LaunchArgs a = parse({"qa", "--do_train"});
  EXPECT_EQ(a.min_nodes, 1);
  EXPECT_EQ(a.max_nodes, 1);
  EXPECT_EQ(a.nproc_per_node, "1");
  EXPECT_EQ(a.rdzv_backend, "static");
  EXPECT_EQ(a.rdzv_id, "none");
  EXPECT_EQ(a.max_restarts, 0);
  EXPECT_EQ(a.master_addr, "127.0.0.1");
  EXPECT_EQ(a.master_port, 29500);
  EXPECT_EQ(a.endpoint_host(), "127.0.0.1");
  EXPECT_EQ(a.endpoint_port(), 29500);
  EXPECT_EQ(a.rdzv_conf.join_timeout, 600);
  EXPECT_EQ(a.rdzv_conf.last_call_timeout, 30);
  EXPECT_EQ(a.command, (std::vector<std::string>{"qa", "--do_train"}));
}

TEST(LaunchArgs, BothSpellingsAndEquals) {
  LaunchArgs a = parse({"--nproc_per_node=4", "--nnodes", "1:3", "--rdzv-backend=c10d", "--rdzv_endpoint",
                        "node0", "--max-restarts", "5", "--rdzv-id", "job7", "coretrain", "qa", "--bf16"});
  EXPECT_EQ(a.nproc_per_node, "4");
  EXPECT_EQ(a.min_nodes, 1);
  EXPECT_EQ(a.max_nodes, 3);
  EXPECT_TRUE(a.elastic());
  EXPECT_EQ(a.endpoint_host(), "node0");
  EXPECT_EQ(a.endpoint_port(), 29400);  // c10d's default port
  EXPECT_EQ(a.max_restarts, 5);
  EXPECT_EQ(a.command, (std::vector<std::string>{"coretrain", "qa", "--bf16"}));
}

TEST(LaunchArgs, PetVariablesAsTheOperatorSetsThemCommandLineWins) {
  FakeEnv env;
  env.vars = {{"PET_NNODES", "1:4"},
              {"PET_RDZV_BACKEND", "c10d"},
              {"PET_RDZV_ENDPOINT", "job-worker-0:23456"},
              {"PET_MAX_RESTARTS", "10"},
              {"PET_NPROC_PER_NODE", "2"},
              {"PET_RDZV_ID", "job"},
              {"PET_RDZV_CONF", "join_timeout=900,last_call_timeout=5"}};
  LaunchArgs a = parse({"--max-restarts", "3", "qa"}, env);
  EXPECT_EQ(a.min_nodes, 1);
  EXPECT_EQ(a.max_nodes, 4);
  EXPECT_EQ(a.endpoint_host(), "job-worker-0");
  EXPECT_EQ(a.endpoint_port(), 23456);
  EXPECT_EQ(a.max_restarts, 3);
  EXPECT_EQ(a.nproc_per_node, "2");
  EXPECT_EQ(a.rdzv_id, "job");
  EXPECT_EQ(a.rdzv_conf.join_timeout, 900);
  EXPECT_EQ(a.rdzv_conf.last_call_timeout, 5);
}

TEST(LaunchArgs, PetSwitchIsItsPresence) {
  FakeEnv env;
  env.vars = {{"PET_STANDALONE", ""}, {"PET_NPROC_PER_NODE", "2"}};
  LaunchArgs a = parse({"qa"}, env);
  EXPECT_TRUE(a.standalone);
  EXPECT_EQ(a.rdzv_backend, "c10d");
  env.vars = {{"PET_RDZV_ID", ""}};
  EXPECT_EQ(parse({"qa"}, env).rdzv_id, "none");  // an empty value is no value
}

TEST(LaunchArgs, Standalone) {
  LaunchArgs a = parse({"--standalone", "--nproc-per-node", "2", "qa"});
  EXPECT_EQ(a.rdzv_backend, "c10d");
  EXPECT_EQ(a.endpoint_host(), "localhost");
  EXPECT_EQ(a.endpoint_port(), 0);
}

TEST(LaunchArgs, StdSpecs) {
  EXPECT_EQ(parse_std_spec("--tee", "3"), (std::map<int, int>{{-1, 3}}));
  EXPECT_EQ(parse_std_spec("--redirects", "0:1,1:2"), (std::map<int, int>{{0, 1}, {1, 2}}));
  LaunchArgs a = parse({"-r", "3", "--local-ranks-filter", "0,2", "qa"});
  EXPECT_EQ(a.redirects.at(-1), 3);
  EXPECT_EQ(a.local_ranks_filter, (std::vector<int>{0, 2}));
}

TEST(LaunchArgs, NprocSpecs) {
  EXPECT_EQ(resolve_nproc_per_node("3", 8, 2), 3);
  EXPECT_EQ(resolve_nproc_per_node("cpu", 8, 2), 8);
  EXPECT_EQ(resolve_nproc_per_node("auto", 8, 2), 2);
  EXPECT_EQ(resolve_nproc_per_node("auto", 1, 4), 1);
}

TEST(LaunchArgs, ErrorsNameTheFlag) {
  {
    std::string e = error_of({"--nnodes", "3:1", "qa"});
    EXPECT_NE(e.find("--nnodes"), std::string::npos) << e;
  }
  std::string e = error_of({"--nproc-per-node", "gpu", "qa"});
  EXPECT_NE(e.find("CPUs"), std::string::npos) << e;
  e = error_of({"--rdzv-backend", "etcd", "qa"});
  EXPECT_NE(e.find("etcd"), std::string::npos) << e;
  e = error_of({"--nnodes", "1:2", "--rdzv-backend", "c10d", "qa"});
  EXPECT_NE(e.find("--rdzv-endpoint"), std::string::npos) << e;
  e = error_of({"--nnodes", "1:2", "qa"});
  EXPECT_NE(e.find("static"), std::string::npos) << e;
  e = error_of({"--bogus", "qa"});
  EXPECT_NE(e.find("--bogus"), std::string::npos) << e;
  e = error_of({"--nproc-per-node", "2"});
  EXPECT_NE(e.find("no worker command"), std::string::npos) << e;
  e = error_of({"--rdzv-conf", "join_timeout=x", "qa"});
  EXPECT_NE(e.find("join_timeout"), std::string::npos) << e;
  FakeEnv env;
  env.vars = {{"PET_MAX_RESTARTS", "many"}};
  e = error_of({"qa"}, env);
  EXPECT_NE(e.find("PET_MAX_RESTARTS"), std::string::npos) << e;
  e = error_of({"--node-rank", "2", "--nnodes", "2", "qa"});
  EXPECT_NE(e.find("--node-rank"), std::string::npos) << e;
}

}  // namespace
}  // namespace ct::launch

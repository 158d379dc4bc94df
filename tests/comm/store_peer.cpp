// ct_store_peer: a test helper (not a user command) that lets a script drive our TCP store from another
// process, for the interop tests against PyTorch's TCPStore (store_interop_test.py).
//   ct_store_peer serve [PORT]       hosts a TcpStoreServer, prints "port N", runs until stdin closes
//   ct_store_peer client HOST PORT   connects (5 s), prints "ok <describe()>", then one reply line per
//   command:
//     set K V | get K MS | add K D | cs K EXPECTED DESIRED | check K... | wait MS K... | del K | numkeys
//     | later MS set K V (answers at once, sets after MS ms from a thread)
// Values are single tokens; "-" stands for the empty value. Replies: "ok [result]" or "err <message>".
// Either mode exits after 120 s whatever happens, so a test that dies never leaves it behind.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "comm/store.h"
#include "core/error.h"

using namespace ct::comm;

namespace {

std::string val(const std::string& t) {
  return t == "-" ? std::string() : t;
}
Store::Bytes bytes(const std::string& t) {
  std::string v = val(t);
  return Store::Bytes(v.begin(), v.end());
}
std::string text(const Store::Bytes& b) {
  return b.empty() ? "-" : std::string(b.begin(), b.end());
}

std::string run(Store& s, std::vector<std::thread>& later, std::istringstream& in, const std::string& cmd) {
  using std::chrono::milliseconds;
  std::string k, v, e;
  long long n = 0;
  if (cmd == "set" && in >> k >> v) {
    s.set(k, bytes(v));
    return "ok";
  }
  if (cmd == "get" && in >> k >> n) return "ok " + text(s.get(k, milliseconds(n)));
  if (cmd == "add" && in >> k >> n) return "ok " + std::to_string(s.add(k, n));
  if (cmd == "cs" && in >> k >> e >> v) return "ok " + text(s.compare_set(k, bytes(e), bytes(v)));
  if (cmd == "del" && in >> k) return s.remove(k) ? "ok 1" : "ok 0";
  if (cmd == "numkeys") return "ok " + std::to_string(s.num_keys());
  std::vector<std::string> keys;
  if (cmd == "check") {
    while (in >> k) keys.push_back(k);
    return s.check(keys) ? "ok 1" : "ok 0";
  }
  if (cmd == "wait" && in >> n) {
    while (in >> k) keys.push_back(k);
    s.wait(keys, milliseconds(n));
    return "ok";
  }
  if (cmd == "later" && in >> n >> e >> k >> v && e == "set") {
    later.emplace_back([&s, n, k, v] {
      std::this_thread::sleep_for(milliseconds(n));
      try {
        s.set(k, bytes(v));
      } catch (const std::exception& e) {
        std::cerr << "later set failed: " << e.what() << std::endl;
      }
    });
    return "ok";
  }
  return "err bad command: " + cmd;
}

}  // namespace

int main(int argc, char** argv) {
  alarm(120);  // SIGALRM's default action ends the process
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "serve") {
      TcpStoreServer server(argc > 2 ? std::stoi(argv[2]) : 0);
      std::cout << "port " << server.port() << std::endl;
      std::string line;
      while (std::getline(std::cin, line) && line != "quit") {
      }
      return 0;
    }
    if (mode == "client" && argc == 4) {
      auto s = connect_tcp_store(argv[2], std::stoi(argv[3]), std::chrono::seconds(5));
      std::cout << "ok " << s->describe() << std::endl;
      std::vector<std::thread> later;
      std::string line;
      while (std::getline(std::cin, line) && line != "quit") {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        std::string reply;
        try {
          reply = run(*s, later, in, cmd);
        } catch (const std::exception& e) {
          reply = std::string("err ") + e.what();
        }
        std::cout << reply << std::endl;
      }
      for (auto& t : later) t.join();
      return 0;
    }
  } catch (const std::exception& e) {
    std::cout << "err " << e.what() << std::endl;
    return 1;
  }
  std::cerr << "usage: ct_store_peer serve [PORT] | client HOST PORT\n";
  return 2;
}

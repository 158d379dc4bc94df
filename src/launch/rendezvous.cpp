// Rendezvous rounds over the store. Elections use the store's atomic counter (the first to add 1 to a key
// wins), so nothing here needs compare-and-set, and every read is a check() followed by a get(), never a
// blocking wait on a key that may not come.
#include "launch/rendezvous.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/log.h"

namespace ct::launch {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kReadTimeout{10000};

std::string rkey(int round, const std::string& name) {
  return str("r", round, "/", name);
}

std::optional<std::string> read(comm::Store& s, const std::string& key) {
  if (!s.check({key})) return std::nullopt;
  return s.get_string(key, kReadTimeout);
}

int read_int(comm::Store& s, const std::string& key, int dflt) {
  auto v = read(s, key);
  return v && !v->empty() ? std::stoi(*v) : dflt;
}

double seconds(milliseconds ms) {
  return static_cast<double>(ms.count()) / 1000.0;
}

std::string describe_nodes(const std::vector<NodeInfo>& nodes) {
  std::string s;
  for (size_t i = 0; i < nodes.size(); ++i) s += (i ? ", " : "") + nodes[i].host + " (" + nodes[i].addr + ")";
  return s.empty() ? "none" : s;
}

}  // namespace

int Round::world_size() const {
  int n = 0;
  for (const auto& node : nodes) n += node.nproc;
  return n;
}

int Round::first_rank(int g) const {
  int n = 0;
  for (int i = 0; i < g; ++i) n += nodes[static_cast<size_t>(i)].nproc;
  return n;
}

std::string node_info_json(const NodeInfo& n) {
  return json{{"agent", n.agent_id},
              {"host", n.host},
              {"addr", n.addr},
              {"nproc", n.nproc},
              {"node_rank", n.node_rank}}
      .dump();
}

NodeInfo node_info_from_json(const std::string& s) {
  json j = json::parse(s);
  NodeInfo n;
  n.agent_id = j.at("agent");
  n.host = j.at("host");
  n.addr = j.at("addr");
  n.nproc = j.at("nproc");
  n.node_rank = j.at("node_rank");
  return n;
}

std::string failure_json(const FailureRecord& f) {
  return json{{"rank", f.rank},
              {"local_rank", f.local_rank},
              {"host", f.host},
              {"pid", f.pid},
              {"exitcode", f.exitcode},
              {"time", f.time},
              {"error_file", f.error_file},
              {"message", f.message}}
      .dump();
}

FailureRecord failure_from_json(const std::string& s) {
  json j = json::parse(s);
  FailureRecord f;
  f.rank = j.at("rank");
  f.local_rank = j.at("local_rank");
  f.host = j.at("host");
  f.pid = j.at("pid");
  f.exitcode = j.at("exitcode");
  f.time = j.at("time");
  f.error_file = j.at("error_file");
  f.message = j.at("message");
  return f;
}

// ------------------------------------------------------------------------------------------------ agent side

Rendezvous::Rendezvous(std::shared_ptr<comm::Store> store, RendezvousSettings settings, NodeInfo me)
    : store_(std::move(store)), s_(std::move(settings)), me_(std::move(me)) {
  store_->add("hb/" + me_.agent_id, 1);
  heartbeat_ = std::thread([this] { heartbeat_loop(); });
}

Rendezvous::~Rendezvous() {
  stop_ = true;
  if (heartbeat_.joinable()) heartbeat_.join();
}

void Rendezvous::heartbeat_loop() {
  auto next = Clock::now();
  while (!stop_) {
    if (Clock::now() >= next) {
      try {
        store_->add("hb/" + me_.agent_id, 1);
      } catch (const std::exception&) {
        // The monitor loop notices a lost store on its own reads and says so once.
      }
      next = Clock::now() + s_.keep_alive_interval;
    }
    std::this_thread::sleep_for(std::min(milliseconds(50), s_.keep_alive_interval));
  }
}

Round Rendezvous::join() {
  comm::Store& s = *store_;
  const auto start = Clock::now();
  // The coordinator fails a round at join_timeout; our own deadline is later so its message (who joined)
  // wins.
  const auto deadline = start + s_.join_timeout + milliseconds(5000);
  int waiting_on = -1;
  bool said_waiting = false;
  while (true) {
    CT_CHECK(Clock::now() < deadline, "rendezvous '", s_.run_id,
             "': no round closed within join_timeout=", seconds(s_.join_timeout), "s (", s.describe(),
             "; is the agent hosting the store running?)");
    if (job_finished()) fail("rendezvous '", s_.run_id, "': the job finished before this node could join");
    if (auto why = job_failed()) fail("rendezvous '", s_.run_id, "': the job failed: ", *why);
    auto round_value = read(s, "round");
    if (!round_value) {
      std::this_thread::sleep_for(s_.poll);
      continue;
    }
    const int R = std::stoi(*round_value);
    if (s.check({rkey(R, "closed")}) || s.check({rkey(R, "restart_n")})) {
      // Arrived while a round runs: count as waiting (a scale-up), then join the next one.
      if (waiting_on != R) {
        s.add(rkey(R, "waiting"), 1);
        waiting_on = R;
        if (!said_waiting)
          log::info("rendezvous '", s_.run_id, "': round ", R, " is running; waiting to join the next round");
        said_waiting = true;
      }
      std::this_thread::sleep_for(s_.poll);
      continue;
    }
    const int index = static_cast<int>(s.add(rkey(R, "joined"), 1)) - 1;
    s.set_string(rkey(R, str("node", index)), node_info_json(me_));
    log::debug("rendezvous '", s_.run_id, "': joined round ", R, " as joiner ", index);
    while (true) {
      CT_CHECK(Clock::now() < deadline, "rendezvous '", s_.run_id, "' round ", R,
               ": did not close within join_timeout=", seconds(s_.join_timeout), "s (", s.describe(), ")");
      if (auto why = read(s, rkey(R, "failed"))) fail("rendezvous '", s_.run_id, "' round ", R, ": ", *why);
      if (auto closed = read(s, rkey(R, "closed"))) {
        json j = json::parse(*closed);
        std::vector<int> members = j.at("members");
        auto it = std::find(members.begin(), members.end(), index);
        if (it == members.end()) break;  // closed without us (late, or thought lost): wait for the next round
        Round round;
        round.number = R;
        round.failures = j.at("failures");
        round.group_rank = static_cast<int>(it - members.begin());
        for (int m : members)
          round.nodes.push_back(node_info_from_json(s.get_string(rkey(R, str("node", m)), kReadTimeout)));
        return round;
      }
      std::this_thread::sleep_for(s_.poll);
    }
  }
}

std::optional<RestartRecord> Rendezvous::restart_requested(int round) {
  auto v = read(*store_, rkey(round, "restart"));
  if (!v) return std::nullopt;
  json j = json::parse(*v);
  return RestartRecord{j.at("kind"), j.at("reason"), j.at("by")};
}

RestartRecord propose_restart(comm::Store& s, int round, const RestartRecord& r) {
  if (s.add(rkey(round, "restart_n"), 1) == 1) {
    // Count before publishing: whoever reads the record then reads the count that includes it.
    if (r.counts()) s.add("failures", 1);
    s.set_string(rkey(round, "restart"), json{{"kind", r.kind}, {"reason", r.reason}, {"by", r.by}}.dump());
    return r;
  }
  auto deadline = Clock::now() + kReadTimeout;
  while (Clock::now() < deadline) {
    if (auto v = read(s, rkey(round, "restart"))) {
      json j = json::parse(*v);
      return RestartRecord{j.at("kind"), j.at("reason"), j.at("by")};
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  fail("rendezvous round ", round, ": a restart was proposed but never published (", s.describe(), ")");
}

RestartRecord Rendezvous::propose_restart(int round, const RestartRecord& r) {
  return ct::launch::propose_restart(*store_, round, r);
}

void Rendezvous::advance(int round) {
  if (store_->add(rkey(round, "advance_n"), 1) == 1) store_->set_string("round", std::to_string(round + 1));
}

void Rendezvous::publish_failure(int round, const FailureRecord& f) {
  int k = static_cast<int>(store_->add(rkey(round, "nfailures"), 1)) - 1;
  store_->set_string(rkey(round, str("failure", k)), failure_json(f));
}

std::vector<FailureRecord> Rendezvous::failures(int round) {
  std::vector<FailureRecord> out;
  int n = read_int(*store_, rkey(round, "nfailures"), 0);
  for (int k = 0; k < n; ++k)
    if (auto v = read(*store_, rkey(round, str("failure", k)))) out.push_back(failure_from_json(*v));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  // The peers of a worker that was killed fail with connection errors a few milliseconds later, and agents on
  // different nodes notice exits at slightly different times: a worker killed by a signal within a second of
  // the first failure is the likelier root cause, so it goes first.
  if (!out.empty() && out[0].exitcode >= 0) {
    for (size_t i = 1; i < out.size() && out[i].time - out[0].time <= 1.0; ++i)
      if (out[i].exitcode < 0) {
        std::rotate(out.begin(), out.begin() + static_cast<long>(i), out.begin() + static_cast<long>(i) + 1);
        break;
      }
  }
  return out;
}

void Rendezvous::mark_done(int round, int group_rank) {
  store_->set_string(rkey(round, str("done", group_rank)), "1");
  store_->add(rkey(round, "ndone"), 1);
}

int Rendezvous::done_count(int round) {
  return read_int(*store_, rkey(round, "ndone"), 0);
}

void Rendezvous::mark_job_finished() {
  store_->set_string("job/finished", "1");
}

bool Rendezvous::job_finished() {
  return store_->check({"job/finished"});
}

void Rendezvous::mark_job_failed(const std::string& why) {
  if (!store_->check({"job/failed"})) store_->set_string("job/failed", why);
}

std::optional<std::string> Rendezvous::job_failed() {
  return read(*store_, "job/failed");
}

// ------------------------------------------------------------------------------------------ coordinator side

RendezvousCoordinator::RendezvousCoordinator(std::shared_ptr<comm::Store> store, RendezvousSettings settings)
    : store_(std::move(store)), s_(std::move(settings)) {
  if (!store_->check({"round"})) store_->set_string("round", "0");
  thread_ = std::thread([this] { loop(); });
}

RendezvousCoordinator::~RendezvousCoordinator() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void RendezvousCoordinator::loop() {
  comm::Store& s = *store_;
  const milliseconds stale = s_.keep_alive_interval * s_.keep_alive_max_attempt;
  struct Beat {
    int64_t value = -1;
    Clock::time_point changed;
  };
  std::map<std::string, Beat> beats;
  auto alive = [&](const std::string& agent, Clock::time_point now) {
    int64_t v = 0;
    if (auto x = read(s, "hb/" + agent)) v = std::stoll(*x);
    Beat& b = beats[agent];
    if (v != b.value) {
      b.value = v;
      b.changed = now;
    }
    return now - b.changed < stale;
  };

  int current = -1;
  Clock::time_point opened, min_reached;
  bool min_seen = false, closed = false;
  std::vector<NodeInfo> members;
  while (!stop_) {
    try {
      if (s.check({"job/finished"}) || s.check({"job/failed"})) {
        std::this_thread::sleep_for(s_.poll);
        continue;
      }
      const auto now = Clock::now();
      const int R = read_int(s, "round", 0);
      if (R != current) {
        current = R;
        opened = now;
        min_seen = false;
        closed = false;
        members.clear();
      }
      if (!closed && s.check({rkey(R, "failed")})) {
        std::this_thread::sleep_for(s_.poll);
        continue;
      }
      if (!closed) {
        const int joined = read_int(s, rkey(R, "joined"), 0);
        std::vector<int> live;
        std::vector<NodeInfo> infos, everyone;
        for (int i = 0; i < joined; ++i) {
          auto v = read(s, rkey(R, str("node", i)));
          if (!v) continue;  // joined a moment ago; its info follows
          NodeInfo n = node_info_from_json(*v);
          everyone.push_back(n);
          if (!alive(n.agent_id, now)) continue;
          if (std::any_of(infos.begin(), infos.end(),
                          [&](const NodeInfo& o) { return o.agent_id == n.agent_id; }))
            continue;
          live.push_back(i);
          infos.push_back(n);
        }
        int n = static_cast<int>(live.size());
        if (s_.order_by_node_rank) {
          std::map<int, std::string> seen;
          for (const auto& info : infos) {
            if (seen.count(info.node_rank)) {
              s.set_string(rkey(R, "failed"), str("two nodes claim --node-rank ", info.node_rank, ": ",
                                                  seen[info.node_rank], " and ", info.host));
              continue;
            }
            seen[info.node_rank] = info.host;
          }
        }
        if (n >= s_.min_nodes && !min_seen) {
          min_seen = true;
          min_reached = now;
        }
        if (n < s_.min_nodes) min_seen = false;
        const bool full = n >= s_.max_nodes;
        const bool last_call_over = min_seen && now - min_reached >= s_.last_call;
        if (full || last_call_over) {
          std::vector<size_t> order(static_cast<size_t>(std::min(n, s_.max_nodes)));
          for (size_t k = 0; k < order.size(); ++k) order[k] = k;
          if (s_.order_by_node_rank)
            std::sort(order.begin(), order.end(),
                      [&](size_t a, size_t b) { return infos[a].node_rank < infos[b].node_rank; });
          json ids = json::array();
          for (size_t k : order) {
            ids.push_back(live[k]);
            members.push_back(infos[k]);
          }
          int failures = read_int(s, "failures", 0);
          s.set_string(rkey(R, "closed"), json{{"members", ids}, {"failures", failures}}.dump());
          closed = true;
          log::info("rendezvous '", s_.run_id, "' round ", R, " closed with ", members.size(),
                    " node(s): ", describe_nodes(members), full ? "" : " (min reached, last call over)");
        } else if (now - opened >= s_.join_timeout) {
          s.set_string(rkey(R, "failed"),
                       str("timed out after join_timeout=", seconds(s_.join_timeout), "s: ", n, " of min ",
                           s_.min_nodes, " node(s) joined (", describe_nodes(everyone), ")"));
        }
      } else if (!s.check({rkey(R, "restart_n")})) {
        for (size_t g = 0; g < members.size(); ++g) {
          if (alive(members[g].agent_id, now)) continue;
          propose_restart(s, R,
                          RestartRecord{"node_lost",
                                        str("node ", members[g].host, " (group rank ", g,
                                            ") lost: no heartbeat for ", seconds(stale), "s"),
                                        "coordinator"});
          break;
        }
        const int waiting = read_int(s, rkey(R, "waiting"), 0);
        if (waiting > 0 && static_cast<int>(members.size()) < s_.max_nodes &&
            !s.check({rkey(R, "restart_n")}))
          propose_restart(s, R,
                          RestartRecord{"scale_up", str(waiting, " node(s) waiting to join"), "coordinator"});
      }
    } catch (const std::exception& e) {
      log::debug("rendezvous coordinator: ", e.what());
    }
    std::this_thread::sleep_for(s_.poll);
  }
}

}  // namespace ct::launch

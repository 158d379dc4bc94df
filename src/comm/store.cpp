// Store implementations in one process: the in-memory map (threaded tests) and the prefix view. The TCP pair
// (c10d's wire format) is in tcp_store_server.cpp and tcp_store_client.cpp.
#include "comm/store.h"

#include <condition_variable>
#include <map>
#include <mutex>

#include "core/error.h"

namespace ct::comm {

void Store::set_string(const std::string& key, const std::string& value) {
  set(key, Bytes(value.begin(), value.end()));
}

std::string Store::get_string(const std::string& key, Timeout timeout) {
  Bytes b = get(key, timeout);
  return std::string(b.begin(), b.end());
}

namespace {

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", '" : "'") + keys[i] + "'";
  return s;
}

int64_t parse_counter(const Store::Bytes& b) {
  if (b.empty()) return 0;
  return std::stoll(std::string(b.begin(), b.end()));
}

Store::Bytes counter_bytes(int64_t v) {
  std::string s = std::to_string(v);
  return Store::Bytes(s.begin(), s.end());
}

// ---------------------------------------------------------------- in-memory

class MemoryStore final : public Store {
 public:
  void set(const std::string& key, const Bytes& value) override {
    std::lock_guard<std::mutex> lock(mu_);
    map_[key] = value;
    cv_.notify_all();
  }
  Bytes get(const std::string& key, Timeout timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    wait_locked(lock, {key}, timeout);
    return map_.at(key);
  }
  int64_t add(const std::string& key, int64_t delta) override {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t v = parse_counter(map_[key]) + delta;
    map_[key] = counter_bytes(v);
    cv_.notify_all();
    return v;
  }
  bool check(const std::vector<std::string>& keys) override {
    std::lock_guard<std::mutex> lock(mu_);
    return all_present(keys);
  }
  void wait(const std::vector<std::string>& keys, Timeout timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    wait_locked(lock, keys, timeout);
  }
  bool remove(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.erase(key) > 0;
  }
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) {
      if (!expected.empty()) return expected;  // c10d: a missing key is not created then
      map_[key] = desired;
      cv_.notify_all();
      return desired;
    }
    if (it->second == expected) {
      it->second = desired;
      cv_.notify_all();
    }
    return it->second;
  }
  int64_t num_keys() override {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(map_.size());
  }
  std::string describe() const override { return "memory store"; }

 private:
  bool all_present(const std::vector<std::string>& keys) const {
    for (auto& k : keys)
      if (!map_.count(k)) return false;
    return true;
  }
  void wait_locked(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                   Timeout timeout) {
    if (cv_.wait_for(lock, timeout, [&] { return all_present(keys); })) return;
    std::vector<std::string> missing;
    for (auto& k : keys)
      if (!map_.count(k)) missing.push_back(k);
    fail("memory store: timed out after ", timeout.count(), " ms waiting for key(s) ", join_keys(missing));
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Bytes> map_;
};

// ---------------------------------------------------------------- prefix

class PrefixStore final : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(prefix + "/") {}
  void set(const std::string& key, const Bytes& value) override { inner_->set(prefix_ + key, value); }
  Bytes get(const std::string& key, Timeout timeout) override { return inner_->get(prefix_ + key, timeout); }
  int64_t add(const std::string& key, int64_t delta) override { return inner_->add(prefix_ + key, delta); }
  bool check(const std::vector<std::string>& keys) override { return inner_->check(prefixed(keys)); }
  void wait(const std::vector<std::string>& keys, Timeout timeout) override {
    inner_->wait(prefixed(keys), timeout);
  }
  bool remove(const std::string& key) override { return inner_->remove(prefix_ + key); }
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override {
    return inner_->compare_set(prefix_ + key, expected, desired);
  }
  int64_t num_keys() override { return inner_->num_keys(); }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    for (auto& k : keys) out.push_back(prefix_ + k);
    return out;
  }
  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<Store> make_memory_store() {
  return std::make_shared<MemoryStore>();
}

std::shared_ptr<Store> make_prefix_store(std::shared_ptr<Store> inner, const std::string& prefix) {
  return std::make_shared<PrefixStore>(std::move(inner), prefix);
}

}  // namespace ct::comm

// c10d TCPStore's wire format, both generations (PyTorch 1.13 and 2.2+): command numbers, reply codes, the
// VALIDATE magic, our size limits, and little-endian encoding helpers. Shared by tcp_store_server.cpp and
// tcp_store_client.cpp; docs/store-protocol.md has the full picture (what is compatible with what, the
// probe).
//
// Encoding (both generations): little-endian; a string or byte vector is a uint64 length and the bytes; a key
// list is a uint64 count and that many strings; integers are int64. No framing: a request is a command byte
// and its arguments, which may arrive in any number of TCP segments (1.13 sends the command byte on its own).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>

namespace ct::comm::wire {

static_assert(std::endian::native == std::endian::little, "the c10d wire format is little-endian");

// What a request asks for, independent of the generation's numbering.
enum class Op : uint8_t {
  validate,     // 2.x only, first request of every connection: uint32 magic, no reply
  set,          // key, value; no reply
  compare_set,  // key, expected, desired; reply: the current value (c10d semantics, see store.h)
  get,          // key; reply: value (clients WAIT first; c10d drops the connection if the key is missing)
  add,          // key, int64 delta; reply: int64 new value (stored as decimal ASCII)
  check,        // keys; reply: 1 byte kReady / kNotReady
  wait,         // keys; reply: 1 byte kStopWaiting once every key exists
  num_keys,     // reply: int64
  watch_key,    // 1.13 only: key; reply kKeyCallbackRegistered, then a notification on every change
  remove,       // DELETE_KEY: key; reply: int64 0/1
  append,       // 2.x only: key, bytes; no reply
  multi_get,    // 2.x only: keys; reply: one vector per key
  multi_set,    // 2.x only: count, then (key, value) pairs; no reply
  cancel_wait,  // 2.x only: reply 1 byte kWaitCanceled
  ping,         // 2.5+: uint32 nonce; reply: the nonce
  invalid,
};

enum class Gen : uint8_t { unknown, v113, v2 };

inline const char* gen_name(Gen g) {
  return g == Gen::v113 ? "c10d 1.13" : g == Gen::v2 ? "c10d 2.x" : "undecided";
}

// 1.13: SET 0, COMPARE_SET 1, GET 2, ADD 3, CHECK 4, WAIT 5, GETNUMKEYS 6, WATCH_KEY 7, DELETE_KEY 8.
// 2.2+: VALIDATE 0, SET 1, COMPARE_SET 2, GET 3, ADD 4, CHECK 5, WAIT 6, GETNUMKEYS 7, DELETE_KEY 8, APPEND
// 9,
//       MULTI_GET 10, MULTI_SET 11, CANCEL_WAIT 12, PING 13 (QUEUE_* 14-16 exist only in the libuv server).
inline Op op_of(Gen g, uint8_t code) {
  static constexpr Op k113[] = {Op::set,  Op::compare_set, Op::get,       Op::add,   Op::check,
                                Op::wait, Op::num_keys,    Op::watch_key, Op::remove};
  static constexpr Op k2[] = {Op::validate,  Op::set,       Op::compare_set, Op::get,    Op::add,
                              Op::check,     Op::wait,      Op::num_keys,    Op::remove, Op::append,
                              Op::multi_get, Op::multi_set, Op::cancel_wait, Op::ping};
  if (g == Gen::v113) return code < std::size(k113) ? k113[code] : Op::invalid;
  if (g == Gen::v2) return code < std::size(k2) ? k2[code] : Op::invalid;
  return Op::invalid;
}

// The command byte of op in generation g; 0xFF when that generation has no such command.
inline uint8_t code_of(Gen g, Op op) {
  for (unsigned c = 0; c < 16; ++c)
    if (op_of(g, static_cast<uint8_t>(c)) == op) return static_cast<uint8_t>(c);
  return 0xFF;
}

constexpr uint32_t kValidateMagic = 0x3C85F7CE;
constexpr uint8_t kReady = 0, kNotReady = 1;            // CHECK
constexpr uint8_t kStopWaiting = 0, kWaitCanceled = 1;  // WAIT, CANCEL_WAIT
// 1.13 WATCH_KEY notifications: type byte, key, old value, new value.
constexpr uint8_t kKeyUpdated = 0, kKeyCreated = 1, kKeyDeleted = 2, kKeyCallbackRegistered = 3;

// Our limits (c10d's libuv server has 8 KiB keys, 8 MiB values, 128 Ki keys per request); a request over them
// gets its connection dropped, so a garbage length never makes us allocate or wait for gigabytes.
constexpr uint64_t kMaxKey = 64 << 10;
constexpr uint64_t kMaxValue = 64 << 20;
constexpr uint64_t kMaxKeys = 128 << 10;
constexpr size_t kMaxRequest = 2 * kMaxValue + (1 << 20);  // bytes a connection may buffer unparsed

inline void put_u8(std::string& s, uint8_t v) {
  s.push_back(static_cast<char>(v));
}
template <class T>
void put_le(std::string& s, T v) {  // the hosts we run on are little-endian, like c10d's wire
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  s.append(b, sizeof(T));
}
inline void put_bytes(std::string& s, const void* data, size_t n) {
  put_le<uint64_t>(s, n);
  s.append(static_cast<const char*>(data), n);
}
inline void put_str(std::string& s, const std::string& v) {
  put_bytes(s, v.data(), v.size());
}

}  // namespace ct::comm::wire

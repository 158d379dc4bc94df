#include "train/tensorboard.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/error.h"

namespace ct::train {
namespace {

std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected 0x1EDC6F41
    t[i] = c;
  }
  return t;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// Summary{value: [v]} inside Event{wall_time, step, summary}.
std::string event_with_value(double wall_time, int64_t step, const std::string& value) {
  ProtoWriter summary;
  summary.bytes_field(1, value);
  ProtoWriter e;
  e.double_field(1, wall_time);
  if (step != 0) e.int64_field(2, step);  // proto3: the default is not written
  e.bytes_field(5, summary.bytes());
  return e.bytes();
}

std::atomic<int> g_file_counter{0};  // torch's _global_uid: one per event file this process opens

}  // namespace

uint32_t crc32c(std::string_view data) {
  static const auto table = make_crc32c_table();
  uint32_t c = ~0u;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return ~c;
}

uint32_t masked_crc32c(std::string_view data) {
  const uint32_t c = crc32c(data);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

ProtoWriter& ProtoWriter::varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
  return *this;
}

ProtoWriter& ProtoWriter::tag(int field, int wire_type) {
  return varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

ProtoWriter& ProtoWriter::int64_field(int field, int64_t v) {
  return tag(field, 0).varint(static_cast<uint64_t>(v));  // negative int64: ten-byte two's complement
}

ProtoWriter& ProtoWriter::double_field(int field, double v) {
  tag(field, 1);
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  return *this;
}

ProtoWriter& ProtoWriter::float_field(int field, float v) {
  tag(field, 5);
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  return *this;
}

ProtoWriter& ProtoWriter::bytes_field(int field, std::string_view v) {
  tag(field, 2).varint(v.size());
  out_.append(v);
  return *this;
}

std::string tfrecord(std::string_view data) {
  std::string out;
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  le(data.size(), 8);
  le(masked_crc32c(std::string_view(out.data(), 8)), 4);
  out.append(data);
  le(masked_crc32c(data), 4);
  return out;
}

std::string event_file_version(double wall_time) {
  ProtoWriter e;
  e.double_field(1, wall_time);
  e.bytes_field(3, "brain.Event:2");
  return e.bytes();
}

std::string event_scalar(double wall_time, int64_t step, const std::string& tag, float value) {
  ProtoWriter v;
  v.bytes_field(1, tag).float_field(2, value);
  return event_with_value(wall_time, step, v.bytes());
}

std::string event_text(double wall_time, int64_t step, const std::string& tag, const std::string& text) {
  // SummaryMetadata{plugin_data: PluginData{plugin_name "text", content TextPluginData{version 0} = ""}}
  ProtoWriter plugin;
  plugin.bytes_field(1, "text");
  ProtoWriter meta;
  meta.bytes_field(1, plugin.bytes());
  // TensorProto{dtype DT_STRING (7), tensor_shape {dim [{size 1}]}, string_val [text]}
  ProtoWriter dim;
  dim.int64_field(1, 1);
  ProtoWriter shape;
  shape.bytes_field(2, dim.bytes());
  ProtoWriter tensor;
  tensor.int64_field(1, 7).bytes_field(2, shape.bytes()).bytes_field(8, text);
  ProtoWriter v;
  v.bytes_field(1, tag + "/text_summary").bytes_field(8, tensor.bytes()).bytes_field(9, meta.bytes());
  return event_with_value(wall_time, step, v.bytes());
}

TensorBoardWriter::TensorBoardWriter(const std::string& logdir) {
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) fail("--logging_dir: cannot create ", logdir, " (", ec.message(), ")");
  const double t = now_seconds();
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%010lld", static_cast<long long>(t));
  path_ = str(logdir, "/events.out.tfevents.", stamp, ".", hostname(), ".", getpid(), ".", g_file_counter++);
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) fail("--logging_dir: cannot create ", path_, " (", std::strerror(errno), ")");
  write(event_file_version(t));
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_) std::fclose(file_);
}

void TensorBoardWriter::write(const std::string& event) {
  const std::string rec = tfrecord(event);
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size())
    fail(path_, ": write failed (", std::strerror(errno), ")");
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  write(event_scalar(now_seconds(), step, tag, static_cast<float>(value)));
}

void TensorBoardWriter::add_text(const std::string& tag, const std::string& text, int64_t step) {
  write(event_text(now_seconds(), step, tag, text));
}

void TensorBoardWriter::flush() {
  if (std::fflush(file_) != 0) fail(path_, ": flush failed (", std::strerror(errno), ")");
}

std::string tensorboard_tag(const std::string& key) {
  if (key.rfind("eval_", 0) == 0) return "eval/" + key.substr(5);
  if (key.rfind("test_", 0) == 0) return "test/" + key.substr(5);
  return "train/" + key;
}

void tensorboard_log(TensorBoardWriter& w, const nlohmann::json& entry, int64_t step) {
  for (const auto& [k, v] : entry.items()) {
    if (k == "step") continue;  // HF's on_log gets the logs before "step" is added
    if (v.is_number()) w.add_scalar(tensorboard_tag(k), v.get<double>(), step);
    if (v.is_boolean()) w.add_scalar(tensorboard_tag(k), v.get<bool>() ? 1.0 : 0.0, step);
  }
  w.flush();
}

std::string default_logging_dir(const std::string& output_dir) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "%b%d_%H-%M-%S", &tm);
  return (std::filesystem::path(output_dir) / "runs" / (std::string(stamp) + "_" + hostname())).string();
}

}  // namespace ct::train

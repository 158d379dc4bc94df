// TensorBoard event files as torch's SummaryWriter writes them for the HF Trainer's TensorBoardCallback, with
// no TensorFlow or protobuf library: the TFRecord framing (uint64le length, masked CRC-32C of the length,
// data, masked CRC-32C of the data), and the few protobuf messages an event file holds (Event, Summary,
// Summary.Value, SummaryMetadata, TensorProto, TensorShapeProto) encoded by hand.
//
// File: {logdir}/events.out.tfevents.{%010d seconds}.{hostname}.{pid}.{counter}; the first record is
// Event{wall_time, file_version "brain.Event:2"}. Scalars are Value.simple_value (float) at a step; text is
// Value{tag "{tag}/text_summary", metadata plugin "text", a DT_STRING tensor of shape [1]}, as add_text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ct::train {

// CRC-32C (Castagnoli, reflected, init and final xor ~0), and TFRecord's mask of it.
uint32_t crc32c(std::string_view data);
uint32_t masked_crc32c(std::string_view data);

// The protobuf wire format, the part event files need.
class ProtoWriter {
 public:
  ProtoWriter& varint(uint64_t v);
  ProtoWriter& tag(int field, int wire_type);
  ProtoWriter& int64_field(int field, int64_t v);           // wire type 0
  ProtoWriter& double_field(int field, double v);           // wire type 1 (fixed64)
  ProtoWriter& float_field(int field, float v);             // wire type 5 (fixed32)
  ProtoWriter& bytes_field(int field, std::string_view v);  // wire type 2 (strings and sub-messages)
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

// One TFRecord: length, masked CRC of the length, data, masked CRC of the data.
std::string tfrecord(std::string_view data);

// Event messages.
std::string event_file_version(double wall_time);
std::string event_scalar(double wall_time, int64_t step, const std::string& tag, float value);
std::string event_text(double wall_time, int64_t step, const std::string& tag, const std::string& text);

class TensorBoardWriter {
 public:
  // Creates `logdir` and the event file in it; the file_version record is written and flushed at once.
  explicit TensorBoardWriter(const std::string& logdir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void add_scalar(const std::string& tag, double value, int64_t step);
  void add_text(const std::string& tag, const std::string& text, int64_t step = 0);
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write(const std::string& event);
  std::string path_;
  std::FILE* file_ = nullptr;
};

// The HF TensorBoardCallback's on_log: every number of a log entry (not "step"), tags rewritten eval_x ->
// eval/x, test_x -> test/x, everything else k -> train/k, written as a scalar at `step`, then a flush.
void tensorboard_log(TensorBoardWriter& w, const nlohmann::json& entry, int64_t step);
// The tag HF's rewrite gives a log key.
std::string tensorboard_tag(const std::string& key);

// HF v4's default logging_dir: {output_dir}/runs/{%b%d_%H-%M-%S}_{hostname} (local time).
std::string default_logging_dir(const std::string& output_dir);

}  // namespace ct::train

// TensorBoard encoding pieces, the model card and --report_to, below the process level (the whole run is
// tests/train/observability_test.sh with an independent Python reader).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "tasks/question_answering/qa_model_card.h"
#include "train/model_card.h"
#include "train/tensorboard.h"
#include "train/training_args.h"

namespace ct::train {
namespace {

TEST(TensorBoard, Crc32cKnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);  // the CRC-32C check value
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4
  const uint32_t c = crc32c("123456789");
  EXPECT_EQ(masked_crc32c("123456789"), ((c >> 15) | (c << 17)) + 0xA282EAD8u);
}

TEST(TensorBoard, RecordFraming) {
  const std::string r = tfrecord("abc");
  ASSERT_EQ(r.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(r.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(r.substr(12, 3), "abc");
  auto le32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(r[at + i])) << (8 * i);
    return v;
  };
  EXPECT_EQ(le32(8), masked_crc32c(r.substr(0, 8)));
  EXPECT_EQ(le32(15), masked_crc32c("abc"));
}

TEST(TensorBoard, ProtobufWire) {
  ProtoWriter w;
  w.varint(300);
  EXPECT_EQ(w.bytes(), "\xAC\x02");
  ProtoWriter f;
  f.float_field(2, 1.0f);  // tag 0x15, 0x3F800000 little-endian
  EXPECT_EQ(f.bytes(), std::string("\x15\x00\x00\x80\x3F", 5));
  ProtoWriter d;
  d.double_field(1, 1.0).int64_field(2, 5).bytes_field(3, "hi");
  EXPECT_EQ(d.bytes(), std::string("\x09\0\0\0\0\0\0\xF0\x3F\x10\x05\x1A\x02hi", 15));
  const std::string v = event_file_version(0.0);
  EXPECT_NE(v.find("brain.Event:2"), std::string::npos);
}

TEST(TensorBoard, TagRewrite) {
  EXPECT_EQ(tensorboard_tag("loss"), "train/loss");
  EXPECT_EQ(tensorboard_tag("learning_rate"), "train/learning_rate");
  EXPECT_EQ(tensorboard_tag("epoch"), "train/epoch");
  EXPECT_EQ(tensorboard_tag("eval_f1"), "eval/f1");
  EXPECT_EQ(tensorboard_tag("test_exact_match"), "test/exact_match");
  EXPECT_EQ(tensorboard_tag("train_runtime"), "train/train_runtime");
}

TEST(TensorBoard, DefaultLoggingDir) {
  const std::string d = default_logging_dir("out");
  EXPECT_EQ(d.rfind("out/runs/", 0), 0u) << d;
  EXPECT_EQ(d[9 + 5], '_') << d;  // {%b%d}_{%H-%M-%S}_{host}
}

TEST(ReportTo, ResolvedAsHf) {
  auto parse = [](const std::vector<std::string>& extra) {
    std::vector<std::string> a = {"--demo"};
    a.insert(a.end(), extra.begin(), extra.end());
    return tasks::parse_qa_args(a);
  };
  EXPECT_TRUE(report_integrations(parse({}).training).empty());  // default "none"
  EXPECT_EQ(report_integrations(parse({"--report_to", "all"}).training),
            std::vector<std::string>{"tensorboard"});
  EXPECT_EQ(report_integrations(parse({"--report_to", "tensorboard"}).training),
            std::vector<std::string>{"tensorboard"});
  EXPECT_EQ(report_integrations(parse({"--report_to", "none,tensorboard"}).training),
            std::vector<std::string>{"tensorboard"});
  EXPECT_EQ(training_args_to_json(parse({"--report_to", "all"}).training)["report_to"],
            nlohmann::json::array({"tensorboard"}));
  try {
    parse({"--report_to", "wandb"});
    FAIL() << "wandb accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--report_to: wandb is not available in coretrain"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse({"--report_to", "tensorboard,bogus"}), Error);
}

TEST(ModelCard, PythonFloatRepr) {
  EXPECT_EQ(python_float(3e-5), "3e-05");
  EXPECT_EQ(python_float(5e-05), "5e-05");
  EXPECT_EQ(python_float(0.002), "0.002");
  EXPECT_EQ(python_float(0.0001), "0.0001");
  EXPECT_EQ(python_float(1e-08), "1e-08");
  EXPECT_EQ(python_float(3.0), "3.0");
  EXPECT_EQ(python_float(0.999), "0.999");
  EXPECT_EQ(python_float(88.75), "88.75");
  EXPECT_EQ(python_float(1e16), "1e+16");
  EXPECT_EQ(python_float(123456.0), "123456.0");
  EXPECT_EQ(python_float(-2.5e-07), "-2.5e-07");
}

TEST(ModelCard, HubModelAndDatasetAsRunQaPassesThem) {
  tasks::QaArguments a;
  a.model.model_name_or_path = "google-bert/bert-base-uncased";
  a.data.dataset_name = "squad";
  a.data.dataset_config_name = "plain_text";
  a.training.output_dir = "/tmp/x/bert-squad/";
  a.training.learning_rate = 3e-5;
  a.training.per_device_train_batch_size = 12;
  a.training.num_train_epochs = 2;
  const auto log = nlohmann::json::parse(R"([
    {"loss": 1.5, "grad_norm": 3.0, "learning_rate": 1e-5, "epoch": 1.0, "step": 10},
    {"eval_exact_match": 80.5, "eval_f1": 88.123456, "eval_runtime": 1.0, "eval_samples_per_second": 5.0,
     "eval_steps_per_second": 1.0, "epoch": 1.0, "step": 10},
    {"train_runtime": 10.0, "train_loss": 1.4, "total_flos": 1.0, "epoch": 2.0, "step": 20},
    {"eval_exact_match": 81.0, "eval_f1": 88.5, "eval_runtime": 1.0, "epoch": 2.0, "step": 20}])");
  const std::string c = model_card(tasks::qa_card_info(a), a.training, log, 1);
  const std::string front =
      "---\nlibrary_name: transformers\nbase_model: google-bert/bert-base-uncased\ntags:\n"
      "- generated_from_trainer\ndatasets:\n- squad\nmetrics:\n- exact_match\n- f1\nmodel-index:\n"
      "- name: bert-squad\n  results:\n  - task:\n      name: Question Answering\n      type: "
      "question-answering\n"
      "    dataset:\n      name: squad plain_text\n      type: squad\n      args: plain_text\n    metrics:\n"
      "    - name: Exact Match\n      type: exact_match\n      value: 81.0\n    - name: F1\n      type: f1\n"
      "      value: 88.5\n---\n";
  EXPECT_EQ(c.substr(0, front.size()), front) << c;
  EXPECT_NE(
      c.find("\n# bert-squad\n\nThis model is a fine-tuned version of "
             "[google-bert/bert-base-uncased](https://huggingface.co/google-bert/bert-base-uncased) on the "
             "squad plain_text dataset.\nIt achieves the following results on the evaluation set:\n"
             "- Exact Match: 81.0\n- F1: 88.5\n"),
      std::string::npos)
      << c;
  EXPECT_NE(
      c.find("- learning_rate: 3e-05\n- train_batch_size: 12\n- eval_batch_size: 8\n- seed: 42\n- optimizer: "
             "Use adamw_torch with betas=(0.9,0.999) and epsilon=1e-08 and optimizer_args=No additional "
             "optimizer arguments\n- lr_scheduler_type: linear\n- num_epochs: 2.0\n"),
      std::string::npos)
      << c;
  EXPECT_EQ(c.find("distributed_type"), std::string::npos);
  EXPECT_NE(c.find("### Training results\n\n| Training Loss | Epoch | Step | Exact Match | F1      |\n"
                   "|:-------------:|:-----:|:----:|:-----------:|:-------:|\n"
                   "| 1.5           | 1.0   | 10   | 80.5        | 88.1235 |\n"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("### Framework versions\n\n- coretrain "), std::string::npos);
  EXPECT_NE(c.find("- oneDNN "), std::string::npos);
}

TEST(ModelCard, DistributedHyperparameters) {
  tasks::QaArguments a;
  a.training.output_dir = "out";
  a.training.max_steps = 100;
  a.training.gradient_accumulation_steps = 2;
  const std::string c = model_card(tasks::qa_card_info(a), a.training, nlohmann::json::array(), 4);
  EXPECT_NE(
      c.find("- seed: 42\n- distributed_type: multi-CPU\n- num_devices: 4\n- gradient_accumulation_steps: 2\n"
             "- total_train_batch_size: 64\n- total_eval_batch_size: 32\n"),
      std::string::npos)
      << c;
  EXPECT_NE(c.find("- training_steps: 100\n"), std::string::npos);
  EXPECT_NE(c.find("This model was trained from scratch on an unknown dataset.\n"), std::string::npos);
  EXPECT_NE(c.find("model-index:\n- name: out\n  results: []\n---\n"), std::string::npos) << c;
  EXPECT_EQ(c.find("### Training results"), std::string::npos);  // no training logged
}

}  // namespace
}  // namespace ct::train

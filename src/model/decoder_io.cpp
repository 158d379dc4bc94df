#include "model/decoder_io.h"

#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "kernels/normal_init.h"

namespace ct::model {

void init_decoder_weights(DecoderModel& m, uint64_t seed) {
  const DecoderConfig& c = m.config();
  const float norm_value = c.norm == DecoderNorm::rms_unit_offset ? 0.0f : 1.0f;
  uint64_t word = 0;
  for (const ParamInfo& p : m.layout().params) {
    float* dst = m.params().data() + p.offset;
    const bool norm = p.name.find("norm") != std::string::npos;
    const bool bias = p.name.size() > 5 && p.name.compare(p.name.size() - 5, 5, ".bias") == 0;
    if (norm) {
      std::fill(dst, dst + p.numel(), norm_value);
    } else if (bias) {
      std::fill(dst, dst + p.numel(), 0.0f);
    } else {
      kernels::normal_init(dst, p.numel(), seed, word, static_cast<float>(c.initializer_range));
      word += 4 * static_cast<uint64_t>(p.numel());
    }
  }
}

LoadReport load_decoder_weights(DecoderModel& m, const std::string& weights) {
  LoadReport r = load_hf_weights(weights, m.layout().params, m.params().data());
  check_missing(r, std::vector<std::string>{});
  return r;
}

std::string decoder_config_text(const DecoderConfig& c) {
  return decoder_config_to_json(c).dump(2) + "\n";
}

void save_decoder(const DecoderModel& m, const std::string& dir) {
  std::filesystem::create_directories(dir);
  fs::write_file_atomic(dir + "/config.json", decoder_config_text(m.config()));
  save_hf_weights(dir + "/model.safetensors", m.layout().params, m.params().data());
}

}  // namespace ct::model

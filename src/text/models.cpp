#include "text/models.h"

#include <algorithm>

#include "text/json_fields.h"

namespace ct::text {

void Vocab::read(const nlohmann::json& j, const std::string& where) {
  CT_CHECK(j.is_object(), where, ": expected an object {token: id}");
  index.reserve(j.size());
  for (auto it = j.begin(); it != j.end(); ++it) {
    CT_CHECK(it.value().is_number_integer(), where, "[\"", it.key(), "\"]: expected an integer id");
    const int64_t id = it.value().get<int64_t>();
    CT_CHECK(id >= 0 && id < (int64_t{1} << 31), where, "[\"", it.key(), "\"]: id ", id, " is out of range");
    index.insert_or_assign(it.key(), static_cast<int32_t>(id));
    if (static_cast<size_t>(id) >= by_id.size()) {
      by_id.resize(static_cast<size_t>(id) + 1);
      has_.resize(static_cast<size_t>(id) + 1);
    }
    by_id[static_cast<size_t>(id)] = it.key();
    has_[static_cast<size_t>(id)] = true;
  }
}

std::unique_ptr<Model> make_model(const nlohmann::json& j, const std::string& where) {
  CT_CHECK(j.is_object(), where, ": expected an object");
  std::string type = jf::get_string(j, "type", "", where);
  if (type.empty()) {
    // Legacy files without "type": HF infers it from the fields.
    if (j.contains("merges")) {
      type = "BPE";
    } else if (j.contains("continuing_subword_prefix")) {
      type = "WordPiece";
    } else if (j.contains("unk_id")) {
      type = "Unigram";
    } else {
      type = "WordLevel";
    }
  }
  if (type == "BPE") return make_bpe(j, where);
  if (type == "Unigram") return make_unigram(j, where);
  if (type == "WordPiece") return make_wordpiece(j, where);
  if (type == "WordLevel") return make_wordlevel(j, where);
  jf::unsupported(where, "model", type, "BPE, Unigram, WordPiece, WordLevel");
}

}  // namespace ct::text

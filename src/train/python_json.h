// JSON as Python's json module writes and reads it: HF's files (all_results.json, trainer_state.json) come
// from json.dump, which writes the non-finite floats as the bare tokens Infinity, -Infinity and NaN
// (run_mlm's perplexity is inf when exp(eval_loss) overflows), where nlohmann::json writes null. Finite
// values and the layout are nlohmann's dump(indent), unchanged.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ct::train {

// j.dump(indent) with non-finite floats written as Python writes them.
std::string dump_python_json(const nlohmann::json& j, int indent = -1);
// Parses JSON that may hold Python's Infinity, -Infinity and NaN (outside strings) as the doubles they name;
// throws nlohmann::json::parse_error on anything else nlohmann refuses.
nlohmann::json parse_python_json(const std::string& text);

}  // namespace ct::train

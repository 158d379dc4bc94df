// PretrainedConfig.update_from_string as run_mlm and run_clm apply --config_overrides to a fresh config:
// "k=v,k2=v2", each value typed as the default it replaces (bool, int, float, else string).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ct::tasks {

// Applies `overrides` to `config` (a family's defaults under HF's field names). `overridable` says which
// keys may be set; `aliases` map a common name to the family's own field (DistilBERT's dim). Anything else
// fails naming the flag and the key.
void update_from_string(nlohmann::json& config, const std::string& overrides, const std::string& model_type,
                        const std::function<bool(const std::string&)>& overridable,
                        const std::vector<std::pair<std::string, std::string>>& aliases = {});

}  // namespace ct::tasks

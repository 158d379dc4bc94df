// Legacy namespace-free dataset names: the Hub stopped resolving them when the canonical datasets moved to
// their owners (transformers PR #29679), but the example scripts' users still write them. Sources for each
// row: ../shared design reference "parquet-datasets" §5.1.
#include <string>
#include <utility>

#include "data/hub_dataset.h"

namespace ct::data {

std::string dataset_repo_id(const std::string& name) {
  static const std::pair<const char*, const char*> table[] = {
      {"glue", "nyu-mll/glue"},     {"squad", "rajpurkar/squad"},       {"squad_v2", "rajpurkar/squad_v2"},
      {"imdb", "stanfordnlp/imdb"}, {"conll2003", "eriktks/conll2003"}, {"wikitext", "Salesforce/wikitext"},
      {"swag", "allenai/swag"},
  };
  if (name.find('/') != std::string::npos) return name;
  for (const auto& [from, to] : table)
    if (name == from) return to;
  return name;
}

}  // namespace ct::data

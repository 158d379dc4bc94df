// The YAML front matter of a dataset card (README.md between the leading "---" lines), read with a subset of
// YAML that covers what the Hub writes there: block mappings and sequences (including "- key: value" items
// and sequences at their key's indentation), plain/single-/double-quoted scalars, flow lists and empty flow
// maps, block scalars (| and >), comments. No anchors, tags or multi-document streams. Debian's yaml-cpp
// would do, but one section (configs) is all datasets resolution needs.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ct::data {

// The text between a leading "---" line and the next "---" line; "" when the card has no front matter.
std::string card_front_matter(std::string_view readme);

// Parses a YAML document of the subset above into JSON (scalars: null, bool, integers, strings; floats stay
// strings). Throws ct::Error naming `source` and the line on what it cannot read.
nlohmann::ordered_json parse_yaml(std::string_view text, const std::string& source);

// The front matter's top-level key `key` (e.g. "configs") parsed alone, so that the rest of a card (a large
// dataset_info, unusual YAML) cannot break it; null when absent.
nlohmann::ordered_json card_yaml_section(std::string_view readme, const std::string& key,
                                         const std::string& source);

}  // namespace ct::data

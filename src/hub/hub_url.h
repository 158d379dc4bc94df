// Names on the Hugging Face Hub: repo ids (`org/name` or a legacy `name`), repo types, the resolve URL of a
// file at a revision, and the cache folder a repo gets (huggingface_hub's rules, design reference §7).
#pragma once

#include <string>

namespace ct::hub {

enum class RepoType { model, dataset };

// "model" | "dataset"; throws ct::Error naming the value otherwise.
RepoType parse_repo_type(const std::string& s);
const char* repo_type_name(RepoType t);

// huggingface_hub's validate_repo_id: one or two `[A-Za-z0-9_.-]+` parts joined by '/', at most 96
// characters, no "--" or "..", not starting or ending with '-' or '.'. Empty `why` on success.
bool looks_like_repo_id(const std::string& id, std::string* why = nullptr);

// True for a 40-hex git commit hash (a revision that needs no request once its snapshot file is cached).
bool is_commit_hash(const std::string& s);

// Percent-encoding as Python's urllib.parse.quote: unreserved characters (A-Z a-z 0-9 _ . - ~) and those in
// `safe` are kept.
std::string percent_encode(const std::string& s, const std::string& safe);

// HF_ENDPOINT (default https://huggingface.co), trailing '/' dropped; `override_endpoint` wins when not
// empty.
std::string hub_endpoint(const std::string& override_endpoint = "");

// {endpoint}/{datasets/}{repo_id}/resolve/{revision, encoded whole}/{filename, '/' kept}.
std::string resolve_url(const std::string& endpoint, RepoType type, const std::string& repo_id,
                        const std::string& revision, const std::string& filename);

// "models--org--name" / "datasets--org--name": the repo's folder under the cache root.
std::string repo_folder_name(RepoType type, const std::string& repo_id);

// scheme://host[:port] of an absolute URL ("" when `url` has no scheme).
std::string url_origin(const std::string& url);

}  // namespace ct::hub

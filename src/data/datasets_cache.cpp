#include "data/datasets_cache.h"

#include <cstdlib>

namespace ct::data {

std::string datasets_cache_dir(const std::string& cache_dir) {
  auto home_expand = [](std::string p) {
    if (p.rfind("~/", 0) == 0)
      if (const char* h = std::getenv("HOME"); h && *h) p = std::string(h) + p.substr(1);
    return p;
  };
  if (!cache_dir.empty()) return home_expand(cache_dir);
  if (const char* v = std::getenv("HF_DATASETS_CACHE"); v && *v) return home_expand(v);
  if (const char* hf = std::getenv("HF_HOME"); hf && *hf) return home_expand(hf) + "/datasets";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/huggingface/datasets";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/huggingface/datasets";
}

}  // namespace ct::data

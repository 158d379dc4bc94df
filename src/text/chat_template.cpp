// Template lookup and the render context exactly as transformers builds them; see chat_template.h.
#include "text/chat_template.h"

#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "text/jinja_error.h"
#include "text/jinja_parser.h"
#include "text/py_json.h"

namespace ct::text {

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  CT_CHECK(f.good(), "chat template: cannot read ", p.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

nlohmann::ordered_json read_json(const std::filesystem::path& p) {
  try {
    return nlohmann::ordered_json::parse(read_file(p));
  } catch (const nlohmann::json::exception& e) {
    ct::fail(p.string(), ": not valid JSON: ", e.what());
  }
}

// A special token in tokenizer_config.json: a string or an AddedToken dict {"content": ...}.
std::optional<std::string> token_string(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

ChatTemplate::ChatTemplate(const std::string& source, std::string origin)
    : source_(source), origin_(std::move(origin)) {
  try {
    parsed_ = jinja::parse(source_);
  } catch (const jinja::JinjaError& e) {
    ct::fail("chat template ", origin_, ": ", e.what());
  }
}

bool ChatTemplate::has_generation_tags() const {
  static const std::regex kTag(R"(\{\%-?\s*generation\s*-?\%\})");
  return std::regex_search(source_, kTag);
}

ChatRendering ChatTemplate::apply(const ChatTemplateInputs& in, const nlohmann::ordered_json& special_tokens,
                                  const jinja::RenderOptions& options) const {
  std::vector<std::pair<std::string, jinja::Value>> ctx;
  auto put = [&](const std::string& k, jinja::Value v) {
    for (auto& [name, x] : ctx) {
      if (name == k) {
        x = std::move(v);
        return;
      }
    }
    ctx.emplace_back(k, std::move(v));
  };
  try {
    CT_CHECK(in.messages.is_array(), "chat template: messages must be a JSON array of messages");
    put("messages", py::from_json(in.messages));
    put("tools", py::from_json(in.tools));
    put("documents", py::from_json(in.documents));
    put("add_generation_prompt", jinja::Value::boolean(in.add_generation_prompt));
    // render(messages=..., tools=..., documents=..., add_generation_prompt=..., **special_tokens, **kwargs)
    for (auto it = special_tokens.begin(); it != special_tokens.end(); ++it)
      put(it.key(), py::from_json(it.value()));
    CT_CHECK(in.kwargs.is_object(), "chat template: kwargs must be a JSON object");
    for (auto it = in.kwargs.begin(); it != in.kwargs.end(); ++it) {
      CT_CHECK(it.key() != "messages" && it.key() != "tools" && it.key() != "documents" &&
                   it.key() != "add_generation_prompt",
               "chat template: kwargs may not set '", it.key(), "' (it is an argument of its own)");
      put(it.key(), py::from_json(it.value()));
    }
    jinja::Renderer r(options);
    jinja::RenderResult res = r.render(*parsed_, ctx);
    return ChatRendering{std::move(res.text), std::move(res.generation_chars),
                         std::move(res.generation_bytes)};
  } catch (const jinja::JinjaError& e) {
    ct::fail("chat template ", origin_, ": ", e.what());
  }
}

TokenizerChatFiles read_tokenizer_chat_files(const std::filesystem::path& dir) {
  TokenizerChatFiles out;
  out.dir = dir;
  CT_CHECK(std::filesystem::is_directory(dir), "chat template: ", dir.string(), " is not a folder");
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  if (std::filesystem::exists(dir / "tokenizer_config.json"))
    config = read_json(dir / "tokenizer_config.json");
  CT_CHECK(config.is_object(), (dir / "tokenizer_config.json").string(), ": expected a JSON object");

  if (config.contains("chat_template")) {
    const auto& ct = config["chat_template"];
    if (ct.is_string()) {
      out.templates["default"] = ct.get<std::string>();
    } else if (ct.is_array()) {
      // The legacy named list: [{"name": ..., "template": ...}].
      for (const auto& t : ct) {
        CT_CHECK(t.is_object() && t.contains("name") && t["name"].is_string() && t.contains("template") &&
                     t["template"].is_string(),
                 (dir / "tokenizer_config.json").string(),
                 ": chat_template list entries must be {\"name\": str, \"template\": str}");
        out.templates[t["name"].get<std::string>()] = t["template"].get<std::string>();
      }
      out.is_named_set = true;
    } else if (!ct.is_null()) {
      ct::fail((dir / "tokenizer_config.json").string(),
               ": chat_template must be a string or a list of {name, template}");
    }
  }
  // chat_template.jinja wins over tokenizer_config.json; additional_chat_templates/<name>.jinja join it.
  if (std::filesystem::exists(dir / "chat_template.jinja")) {
    out.templates["default"] = read_file(dir / "chat_template.jinja");
  }
  const auto extra = dir / "additional_chat_templates";
  if (std::filesystem::is_directory(extra)) {
    for (const auto& e : std::filesystem::directory_iterator(extra)) {
      if (e.path().extension() == ".jinja") {
        out.templates[e.path().stem().string()] = read_file(e.path());
        out.is_named_set = true;
      }
    }
  }

  // special_tokens_map: the config's values, then special_tokens_map.json for those it lacks.
  nlohmann::ordered_json map_file = nlohmann::ordered_json::object();
  if (std::filesystem::exists(dir / "special_tokens_map.json"))
    map_file = read_json(dir / "special_tokens_map.json");
  for (const char* key :
       {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    std::optional<std::string> v;
    if (config.contains(key)) v = token_string(config[key]);
    if (!v && map_file.is_object() && map_file.contains(key)) v = token_string(map_file[key]);
    if (v) out.special_tokens[key] = *v;
  }
  for (const auto* src : {&config, &map_file}) {
    if (src->is_object() && src->contains("additional_special_tokens") &&
        (*src)["additional_special_tokens"].is_array() && !(*src)["additional_special_tokens"].empty()) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& t : (*src)["additional_special_tokens"]) {
        if (auto s = token_string(t)) list.push_back(*s);
      }
      out.special_tokens["additional_special_tokens"] = list;
      break;
    }
  }
  return out;
}

std::string select_chat_template(const TokenizerChatFiles& files, const std::optional<std::string>& name,
                                 bool with_tools) {
  if (files.is_named_set) {
    if (name) {
      auto it = files.templates.find(*name);
      return it != files.templates.end() ? it->second : *name;
    }
    if (with_tools && files.templates.count("tool_use")) return files.templates.at("tool_use");
    if (files.templates.count("default")) return files.templates.at("default");
    ct::fail(
        "chat template: ", files.dir.string(),
        " has several chat templates and none named 'default'; pick one by name (",
        [&] {
          std::string names;
          for (const auto& [k, v] : files.templates) names += (names.empty() ? "" : ", ") + k;
          return names;
        }(),
        ")");
  }
  if (name) return *name;
  auto it = files.templates.find("default");
  CT_CHECK(it != files.templates.end(), "chat template: ", files.dir.string(),
           " has no chat template (no chat_template.jinja, no chat_template in tokenizer_config.json); pass "
           "--chat_template_path");
  return it->second;
}

std::string read_chat_template_path(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path))
    return select_chat_template(read_tokenizer_chat_files(path), std::nullopt, false);
  CT_CHECK(std::filesystem::exists(path), "--chat_template_path: ", path.string(), " does not exist");
  return read_file(path);
}

}  // namespace ct::text

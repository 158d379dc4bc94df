// transformers' apply_chat_template on our Jinja engine: where a tokenizer folder keeps its template
// (chat_template.jinja, additional_chat_templates/*.jinja, tokenizer_config.json's `chat_template` as a
// string or a [{name, template}] list), which one a call uses (get_chat_template: the named one, else
// `tool_use` when tools are passed, else `default`), and the render context (messages, tools, documents,
// add_generation_prompt, the special tokens as strings, then the caller's kwargs over them).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "text/jinja_ast.h"
#include "text/jinja_render.h"

namespace ct::text {

struct ChatTemplateInputs {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;      // null: none passed (the template sees None)
  nlohmann::ordered_json documents;  // null: none passed
  bool add_generation_prompt = false;
  // Extra template variables (enable_thinking, date_string, ...); they override the special tokens.
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
};

struct ChatRendering {
  std::string text;
  // `{% generation %}` ranges: code points (transformers' char offsets) and bytes of `text`.
  std::vector<jinja::Span> generation_chars;
  std::vector<jinja::Span> generation_bytes;
};

// One compiled template. Errors (parse and render) are ct::Error "chat template <origin>: line L, column C:
// <message>", where a raise_exception message is the message itself.
class ChatTemplate {
 public:
  ChatTemplate(const std::string& source, std::string origin);

  const std::string& source() const { return source_; }
  // Whether the template marks assistant output with {% generation %} (needed for assistant masks).
  bool has_generation_tags() const;

  ChatRendering apply(const ChatTemplateInputs& in, const nlohmann::ordered_json& special_tokens,
                      const jinja::RenderOptions& options = {}) const;

 private:
  std::string source_;
  std::string origin_;
  std::shared_ptr<const jinja::Template> parsed_;
};

// What a tokenizer folder holds for templating.
struct TokenizerChatFiles {
  std::map<std::string, std::string> templates;  // "default" is the main one
  bool is_named_set = false;  // several templates (a dict in transformers), not a single string
  // special_tokens_map as strings: bos_token, eos_token, unk_token, sep_token, pad_token, cls_token,
  // mask_token, additional_special_tokens (a list).
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();
  std::filesystem::path dir;
};

TokenizerChatFiles read_tokenizer_chat_files(const std::filesystem::path& dir);

// transformers' get_chat_template: `name` picks a template of a named set (a name that is not one is used
// as template text, as transformers does), else `tool_use` when tools are passed and present, else
// `default`. Throws when the folder has no template.
std::string select_chat_template(const TokenizerChatFiles& files, const std::optional<std::string>& name,
                                 bool with_tools);

// A `--chat_template_path` file (TRL reads .jinja/.j2 verbatim), or a folder to take the template from.
std::string read_chat_template_path(const std::filesystem::path& path);

}  // namespace ct::text

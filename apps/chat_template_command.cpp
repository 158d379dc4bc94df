// `coretrain chat-template`: renders conversations with a model's chat template as transformers'
// apply_chat_template(tokenize=False) would, so a user sees exactly the text a model is trained on or
// prompted with. Input: --messages FILE holding a JSON array of messages, an object {"messages": [...],
// "tools": [...], "documents": [...], "chat_template_kwargs": {...}} as a dataset row has them, or JSON lines
// of either (one conversation per line).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/command.h"
#include "core/error.h"
#include "text/chat_template.h"
#include "train/model_source.h"

namespace {

using nlohmann::ordered_json;

ordered_json parse_json_arg(const std::string& flag, const std::string& text) {
  try {
    return ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    ct::fail(flag, ": not valid JSON: ", e.what());
  }
}

ordered_json read_json_file(const std::string& flag, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  CT_CHECK(f.good(), flag, ": cannot read ", path);
  std::ostringstream s;
  s << f.rdbuf();
  return parse_json_arg(flag + " " + path, s.str());
}

// The conversations of a --messages file: one JSON document, else JSON lines.
std::vector<ordered_json> read_conversations(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  CT_CHECK(f.good(), "--messages: cannot read ", path);
  std::ostringstream s;
  s << f.rdbuf();
  const std::string text = s.str();
  if (ordered_json::accept(text)) return {ordered_json::parse(text)};
  std::vector<ordered_json> out;
  std::istringstream lines(text);
  std::string line;
  size_t lineno = 0;
  while (std::getline(lines, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(ordered_json::parse(line));
    } catch (const nlohmann::json::exception& e) {
      ct::fail("--messages ", path, " line ", lineno, ": not valid JSON: ", e.what());
    }
  }
  CT_CHECK(!out.empty(), "--messages ", path, ": no conversation in it");
  return out;
}

int run_chat_template(int argc, char** argv) {
  CLI::App app{"Render conversations with a model's chat template, as transformers' apply_chat_template does",
               "coretrain chat-template"};
  std::string tokenizer, messages_path, template_path, template_name, kwargs_text, tools_path, documents_path;
  bool add_generation_prompt = false, as_json = false, show_generation = false;
  app.add_option("--tokenizer_name,--model_name_or_path", tokenizer,
                 "model or tokenizer folder (or Hub repo id) whose template and special tokens to use");
  app.add_option(
         "--messages", messages_path,
         "JSON file: a list of {role, content} messages, a {\"messages\": ...} row, or JSON lines of them")
      ->required();
  app.add_option(
      "--chat_template_path", template_path,
      "a template file (.jinja), read verbatim, or a folder to take the template from; overrides the "
      "tokenizer's template as TRL's --chat_template_path does");
  app.add_option(
      "--chat_template_name", template_name,
      "which of a tokenizer's named templates (e.g. tool_use), as apply_chat_template(chat_template=)");
  app.add_flag("--add_generation_prompt", add_generation_prompt, "end with the assistant turn's opening");
  app.add_option("--kwargs", kwargs_text,
                 "JSON object of extra template variables, e.g. '{\"enable_thinking\": false}'");
  app.add_option("--tools", tools_path, "JSON file with a list of tool schemas");
  app.add_option("--documents", documents_path, "JSON file with a list of documents");
  app.add_flag("--json", as_json,
               "print one JSON line per conversation: {\"text\", \"generation_spans\"} (code-point offsets)");
  app.add_flag("--show_generation", show_generation,
               "mark {% generation %} output with \u2039\u2039 \u203a\u203a in the printed text (training "
               "templates' assistant masks)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  CT_CHECK(!tokenizer.empty() || !template_path.empty(),
           "pass --tokenizer_name (a model or tokenizer folder) or --chat_template_path");

  ct::text::TokenizerChatFiles files;
  if (!tokenizer.empty()) {
    if (!std::filesystem::exists(tokenizer)) {
      ct::train::ModelArguments m;
      m.tokenizer_name = tokenizer;
      tokenizer = ct::train::localize_model_sources(m).tokenizer_name;
    }
    const std::filesystem::path dir = std::filesystem::is_directory(tokenizer)
                                          ? std::filesystem::path(tokenizer)
                                          : std::filesystem::path(tokenizer).parent_path();
    files = ct::text::read_tokenizer_chat_files(dir);
  }
  ordered_json kwargs = ordered_json::object();
  if (!kwargs_text.empty()) {
    kwargs = parse_json_arg("--kwargs", kwargs_text);
    CT_CHECK(kwargs.is_object(), "--kwargs: expected a JSON object, got ", kwargs.dump());
  }
  ordered_json tools, documents;
  if (!tools_path.empty()) tools = read_json_file("--tools", tools_path);
  if (!documents_path.empty()) documents = read_json_file("--documents", documents_path);

  size_t index = 0;
  for (const ordered_json& conv : read_conversations(messages_path)) {
    ++index;
    ct::text::ChatTemplateInputs in;
    in.add_generation_prompt = add_generation_prompt;
    in.tools = tools;
    in.documents = documents;
    in.kwargs = kwargs;
    if (conv.is_array()) {
      in.messages = conv;
    } else {
      CT_CHECK(conv.is_object() && conv.contains("messages"), "--messages ", messages_path, " conversation ",
               index, ": expected a list of messages or an object with \"messages\"");
      in.messages = conv["messages"];
      if (conv.contains("tools") && !conv["tools"].is_null()) {
        // Datasets keep tools as a list or as a JSON string of one, as TRL accepts them.
        in.tools = conv["tools"].is_string() ? parse_json_arg("tools", conv["tools"].get<std::string>())
                                             : conv["tools"];
      }
      if (conv.contains("documents") && !conv["documents"].is_null()) in.documents = conv["documents"];
      if (conv.contains("chat_template_kwargs") && conv["chat_template_kwargs"].is_object()) {
        for (auto it = conv["chat_template_kwargs"].begin(); it != conv["chat_template_kwargs"].end(); ++it) {
          in.kwargs[it.key()] = it.value();
        }
      }
    }
    std::string source, origin;
    if (!template_path.empty()) {
      source = ct::text::read_chat_template_path(template_path);
      origin = template_path;
    } else {
      const bool with_tools = in.tools.is_array() && !in.tools.empty();
      source = ct::text::select_chat_template(
          files, template_name.empty() ? std::nullopt : std::optional<std::string>(template_name),
          with_tools);
      origin = files.dir.string();
    }
    const ct::text::ChatTemplate tmpl(source, origin);
    const ct::text::ChatRendering r = tmpl.apply(in, files.special_tokens);
    if (as_json) {
      ordered_json spans = ordered_json::array();
      for (const auto& s : r.generation_chars) spans.push_back({s.begin, s.end});
      std::printf("%s\n", ordered_json{{"text", r.text}, {"generation_spans", spans}}.dump().c_str());
      continue;
    }
    std::string text = r.text;
    if (show_generation) {
      // Insert marks from the last span back, so earlier byte offsets stay valid.
      for (auto it = r.generation_bytes.rbegin(); it != r.generation_bytes.rend(); ++it) {
        text.insert(it->end, "\u203a\u203a");
        text.insert(it->begin, "\u2039\u2039");
      }
    }
    // The rendering exactly, then one newline to end it (--json shows the text with nothing added).
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputs("\n", stdout);
  }
  return 0;
}

}  // namespace

CT_COMMAND("chat-template",
           "render conversations with a model's chat template (transformers' apply_chat_template)",
           run_chat_template);

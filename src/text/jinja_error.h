// The chat-template engine's one error: a ct::Error whose message names the template position. Builtins
// throw it without a position; the renderer adds the position of the expression or tag being evaluated, so
// every message that leaves the engine reads "line L, column C: what".
#pragma once

#include <string>

#include "core/error.h"

namespace ct::text::jinja {

class JinjaError : public ct::Error {
 public:
  explicit JinjaError(std::string message, int line = 0, int column = 0)
      : ct::Error(line > 0 ? "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
                                 one_line(message)
                           : one_line(message)),
        message_(std::move(message)),
        line_(line),
        column_(column) {}

  const std::string& message() const { return message_; }
  int line() const { return line_; }
  int column() const { return column_; }
  bool has_position() const { return line_ > 0; }

  // Errors are printed on one line; a raised message with newlines keeps them visible as \n.
  static std::string one_line(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else {
        out.push_back(c);
      }
    }
    return out;
  }

 private:
  std::string message_;
  int line_;
  int column_;
};

[[noreturn]] inline void raise(std::string message) {
  throw JinjaError(std::move(message));
}

}  // namespace ct::text::jinja

// Error model: bad input throws ct::Error carrying a one-line message that names the culprit (file, flag,
// rank, tensor) and what was expected; main() catches it once, prints it and exits non-zero. Broken
// invariants (bugs) abort with file:line through CT_ASSERT.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ct {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Concatenates anything streamable; gcc 12 has no std::format.
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}

template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(str(args...));
}

}  // namespace ct

#define CT_CHECK(cond, ...)               \
  do {                                    \
    if (!(cond)) ::ct::fail(__VA_ARGS__); \
  } while (0)

#define CT_ASSERT(cond)                                                                            \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "coretrain: internal error at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                                \
    }                                                                                              \
  } while (0)

// TORCHELASTIC_ERROR_FILE: the JSON file torchelastic's @record writes when a worker dies of an exception, so
// that torchrun's (and `coretrain run`'s) failure summary shows the worker's message instead of "To enable
// traceback see ...". The format is torch's ErrorHandler.record_exception (torch 1.13 .. 2.x):
//   {"message": {"message": "<ExceptionType>: <text>",
//                "extraInfo": {"py_callstack": "<text>", "timestamp": "<unix seconds>"}}}
// ProcessFailure reads message/extraInfo.timestamp; the summary prints py_callstack, so it holds the line the
// worker printed on stderr (there is no Python stack).
#pragma once

#include <string>

namespace ct::train {

// The file's contents for an exception of `type` (e.g. "ct::Error") with `text`; `printed` is the stderr
// line.
std::string torchelastic_error_json(const std::string& type, const std::string& text,
                                    const std::string& printed, long long unix_seconds);

// When TORCHELASTIC_ERROR_FILE is set, writes it atomically (temporary file beside it, then rename). Never
// throws: a failure to write is reported on stderr. Returns whether a file was written.
bool write_torchelastic_error_file(const std::string& type, const std::string& text,
                                   const std::string& printed) noexcept;

}  // namespace ct::train

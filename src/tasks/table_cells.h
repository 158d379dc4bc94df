// Reading a task's inputs out of a DatasetTable's cells, with the one-line errors a user needs when a column
// holds something else than the script expects (a number where text goes, a null label): the table's source,
// the column and the row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset_table.h"

namespace ct::tasks {

// Column `name`'s cells as text; fails on a non-string cell (a null included).
std::vector<std::string> text_column(const data::DatasetTable& t, const std::string& name);
// A column of lists of strings (CoNLL's tokens).
std::vector<std::vector<std::string>> text_list_column(const data::DatasetTable& t, const std::string& name);

// A label cell as the key Python compares and prints it: a string as it is, an int in decimal, a bool as
// True/False; fails on a null, a float or a nested cell.
std::string label_key(const data::DatasetTable& t, const std::string& column, int64_t row);
// A regression label (int or float cells).
double label_number(const data::DatasetTable& t, const std::string& column, int64_t row);
// Whether a label column holds floats (datasets' dtype float32/float64: a regression).
bool is_float_column(const data::DatasetTable& t, const std::string& column);

}  // namespace ct::tasks

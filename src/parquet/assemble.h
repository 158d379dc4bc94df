// Record assembly (Dremel): a top-level field's rows rebuilt from its leaves' repetition and definition
// levels, so structs, lists (any naming: element/item/array/legacy repeated), maps and nulls come out whole.
#pragma once

#include <vector>

#include "parquet/column_chunk.h"
#include "parquet/schema.h"
#include "parquet/value.h"

namespace ct::parquet {

// `chunks[c]` holds leaf column c for every leaf under `top` (others may be null). Returns `rows` values.
// Throws when the levels of sibling leaves disagree or run out.
std::vector<Value> assemble_column(const Schema& schema, int top, const std::vector<const ChunkData*>& chunks,
                                   int64_t rows);

}  // namespace ct::parquet

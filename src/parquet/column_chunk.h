// One column chunk read into its levels and values: the page loop (dictionary, data v1 and v2 pages),
// decompression, level decoding and per-page value encodings.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parquet/metadata.h"
#include "parquet/schema.h"
#include "parquet/values.h"

namespace ct::parquet {

struct ChunkData {
  Storage storage = Storage::Ints;
  std::vector<int16_t> rep, def;  // one entry per level entry (zeros when the column has no such levels)
  Values values;                  // non-null leaf values, in order
  std::vector<std::unique_ptr<std::vector<uint8_t>>> buffers;  // decompressed pages the values point into
  // What the chunk held, for tests and diagnostics: pages by PageType, value encodings met.
  int pages[4] = {0, 0, 0, 0};
  uint32_t encodings = 0;  // bit e set: some data page used Encoding e
};

// Reads the chunk `cc` of `leaf` from the mapped file. `where` ("FILE: row group N, column 'a.b'") prefixes
// every error, with the page number added.
ChunkData read_column_chunk(const uint8_t* file, size_t file_size, const ColumnChunk& cc,
                            const SchemaNode& leaf, int max_def, int max_rep, int64_t row_group_rows,
                            const std::string& where);

}  // namespace ct::parquet

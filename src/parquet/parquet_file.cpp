#include "parquet/parquet_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "parquet/assemble.h"
#include "parquet/column_chunk.h"

namespace ct::parquet {

int Table::find(const std::string& name) const {
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return static_cast<int>(k);
  return -1;
}

std::unique_ptr<ParquetFile> ParquetFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  CT_CHECK(fd >= 0, path, ": cannot open Parquet file (", std::strerror(errno), ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail(path, ": cannot stat (", std::strerror(errno), ")");
  }
  std::unique_ptr<ParquetFile> f(new ParquetFile());
  f->name_ = path;
  f->size_ = static_cast<size_t>(st.st_size);
  if (f->size_ > 0) {
    void* m = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      ::close(fd);
      fail(path, ": cannot map (", std::strerror(errno), ")");
    }
    f->map_ = m;
    f->data_ = static_cast<const uint8_t*>(m);
  }
  ::close(fd);
  f->init();
  return f;
}

std::unique_ptr<ParquetFile> ParquetFile::from_memory(const uint8_t* data, size_t size,
                                                      const std::string& name) {
  std::unique_ptr<ParquetFile> f(new ParquetFile());
  f->name_ = name;
  f->data_ = data;
  f->size_ = size;
  f->init();
  return f;
}

ParquetFile::~ParquetFile() {
  if (map_) ::munmap(map_, size_);
}

void ParquetFile::init() {
  CT_CHECK(size_ >= 12, name_, ": not a Parquet file (", size_, " bytes, a valid one has at least 12)");
  const uint8_t* tail = data_ + size_ - 4;
  CT_CHECK(std::memcmp(tail, "PARE", 4) != 0, name_,
           ": encrypted Parquet footer (PARE), which is not supported; decrypt the file first");
  CT_CHECK(std::memcmp(data_, "PAR1", 4) == 0, name_, ": not a Parquet file (no PAR1 magic at the start)");
  CT_CHECK(std::memcmp(tail, "PAR1", 4) == 0, name_,
           ": not a Parquet file or truncated (no PAR1 magic at the end)");
  uint32_t len;
  std::memcpy(&len, data_ + size_ - 8, 4);
  CT_CHECK(len <= size_ - 12, name_, ": footer length ", len, " exceeds the file (", size_, " bytes)");
  const uint8_t* meta = data_ + size_ - 8 - len;
  md_ = parse_file_metadata(meta, meta + len, name_);
  schema_ = std::make_unique<Schema>(md_.schema, name_);
  for (size_t g = 0; g < md_.row_groups.size(); ++g)
    CT_CHECK(md_.row_groups[g].columns.size() == static_cast<size_t>(schema_->num_leaves()), name_,
             ": row group ", g, " has ", md_.row_groups[g].columns.size(), " column chunks, the schema has ",
             schema_->num_leaves(), " leaf columns");
}

std::vector<std::string> ParquetFile::column_names() const {
  std::vector<std::string> names;
  for (int c : schema_->root().children) names.push_back(schema_->node(c).name);
  return names;
}

std::string ParquetFile::key_value(const std::string& key) const {
  for (const auto& kv : md_.key_value)
    if (kv.first == key) return kv.second;
  return {};
}

Table ParquetFile::read_row_group(int rg, const std::vector<std::string>& columns) const {
  CT_CHECK(rg >= 0 && rg < num_row_groups(), name_, ": row group ", rg, " out of range (", num_row_groups(),
           ")");
  const RowGroup& group = md_.row_groups[static_cast<size_t>(rg)];
  const std::vector<std::string> names = columns.empty() ? column_names() : columns;
  Table t;
  t.num_rows = group.num_rows;
  std::vector<const ChunkData*> chunk_ptrs(static_cast<size_t>(schema_->num_leaves()), nullptr);
  for (const std::string& name : names) {
    const int top = schema_->find_top(name);
    if (top < 0) {
      std::string have;
      for (const auto& n : column_names()) have += (have.empty() ? "" : ", ") + n;
      fail(name_, ": no column '", name, "' (columns: ", have, ")");
    }
    std::vector<ChunkData> chunks;
    const auto& leaves = schema_->node(top).leaves;
    chunks.reserve(leaves.size());
    for (int leaf : leaves) {
      const SchemaNode& ln = schema_->leaf(leaf);
      const std::string where = str(name_, ": row group ", rg, ", column '", schema_->leaf_path(leaf), "'");
      chunks.push_back(read_column_chunk(data_, size_, group.columns[static_cast<size_t>(leaf)], ln,
                                         ln.def_level, ln.rep_level, group.num_rows, where));
      chunk_ptrs[static_cast<size_t>(leaf)] = &chunks.back();
      for (int k = 0; k < 4; ++k) stats_.pages[k] += chunks.back().pages[k];
      stats_.encodings |= chunks.back().encodings;
      const int32_t codec = group.columns[static_cast<size_t>(leaf)].meta.codec;
      if (codec >= 0 && codec < 32) stats_.codecs |= 1u << codec;
    }
    try {
      t.columns.push_back(assemble_column(*schema_, top, chunk_ptrs, group.num_rows));
    } catch (const Error& e) {
      fail(name_, ": row group ", rg, ", column '", name, "': ", e.what());
    }
    t.names.push_back(name);
  }
  return t;
}

Table ParquetFile::read(const std::vector<std::string>& columns) const {
  Table all;
  all.names = columns.empty() ? column_names() : columns;
  all.columns.resize(all.names.size());
  for (int rg = 0; rg < num_row_groups(); ++rg) {
    Table t = read_row_group(rg, all.names);
    for (size_t k = 0; k < t.columns.size(); ++k) {
      auto& dst = all.columns[k];
      if (dst.empty()) {
        dst = std::move(t.columns[k]);
      } else {
        dst.insert(dst.end(), std::make_move_iterator(t.columns[k].begin()),
                   std::make_move_iterator(t.columns[k].end()));
      }
    }
    all.num_rows += t.num_rows;
  }
  // Some parquet-mr versions wrote num_rows = 0 with full row groups (parquet-testing's
  // repeated_no_annotation.parquet); readers go by the row groups then, as Arrow does.
  CT_CHECK(all.num_rows == md_.num_rows || md_.num_rows == 0, name_, ": row groups hold ", all.num_rows,
           " rows, the footer says ", md_.num_rows);
  return all;
}

}  // namespace ct::parquet

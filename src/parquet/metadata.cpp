#include "parquet/metadata.h"

#include "core/error.h"
#include "parquet/thrift_compact.h"

namespace ct::parquet {
namespace {

// Reads a struct field by field, handing each to `on_field`; fields it does not consume (returns false) are
// skipped by type, so newer writers' fields pass through.
template <class F>
void read_struct(CompactReader& r, F&& on_field) {
  r.begin_struct();
  FieldHeader h;
  while (r.next_field(h)) {
    if (!on_field(h)) r.skip(h.type);
  }
  r.end_struct();
}

void expect_type(CompactReader& r, const FieldHeader& h, TType t, const char* field) {
  const bool is_bool = (t == TType::True || t == TType::False);
  const bool ok = is_bool ? (h.type == TType::True || h.type == TType::False) : h.type == t;
  if (!ok) r.error(str("field ", field, " (id ", h.id, ") has type ", int(h.type), ", expected ", int(t)));
}

template <class F>
void read_list(CompactReader& r, const FieldHeader& h, TType elem, const char* field, F&& on_elem) {
  expect_type(r, h, TType::List, field);
  const ListHeader lh = r.read_list_header();
  if (lh.size > 0 && lh.elem != elem)
    r.error(str("list ", field, " has elements of type ", int(lh.elem), ", expected ", int(elem)));
  for (uint32_t i = 0; i < lh.size; ++i) on_elem();
}

int32_t i32_field(CompactReader& r, const FieldHeader& h, const char* field) {
  expect_type(r, h, TType::I32, field);
  return r.read_i32();
}

int64_t i64_field(CompactReader& r, const FieldHeader& h, const char* field) {
  expect_type(r, h, TType::I64, field);
  return r.read_i64();
}

std::string string_field(CompactReader& r, const FieldHeader& h, const char* field) {
  expect_type(r, h, TType::Binary, field);
  return r.read_string();
}

void read_logical_type(CompactReader& r, SchemaElement& e) {
  read_struct(r, [&](const FieldHeader& h) {
    if (h.type != TType::Struct) return false;
    e.logical = h.id;
    if (h.id != kLogicalInteger) return false;  // the member's own struct is skipped
    read_struct(r, [&](const FieldHeader& f) {
      if (f.id == 1 && f.type == TType::I8) {
        e.int_bit_width = r.read_i8();
        return true;
      }
      if (f.id == 2 && (f.type == TType::True || f.type == TType::False)) {
        e.int_signed = r.read_bool(f);
        return true;
      }
      return false;
    });
    return true;
  });
}

SchemaElement read_schema_element(CompactReader& r) {
  SchemaElement e;
  bool has_name = false;
  read_struct(r, [&](const FieldHeader& h) {
    switch (h.id) {
      case 1:
        e.type = i32_field(r, h, "SchemaElement.type");
        return true;
      case 2:
        e.type_length = i32_field(r, h, "SchemaElement.type_length");
        return true;
      case 3:
        e.repetition = i32_field(r, h, "SchemaElement.repetition_type");
        return true;
      case 4:
        e.name = string_field(r, h, "SchemaElement.name");
        has_name = true;
        return true;
      case 5:
        e.num_children = i32_field(r, h, "SchemaElement.num_children");
        return true;
      case 6:
        e.converted_type = i32_field(r, h, "SchemaElement.converted_type");
        return true;
      case 10:
        expect_type(r, h, TType::Struct, "SchemaElement.logicalType");
        read_logical_type(r, e);
        return true;
      default:
        return false;
    }
  });
  if (!has_name) r.error("SchemaElement without its required name");
  return e;
}

ColumnMetaData read_column_metadata(CompactReader& r) {
  ColumnMetaData m;
  read_struct(r, [&](const FieldHeader& h) {
    switch (h.id) {
      case 1:
        m.type = i32_field(r, h, "ColumnMetaData.type");
        return true;
      case 3:
        read_list(r, h, TType::Binary, "ColumnMetaData.path_in_schema",
                  [&] { m.path.push_back(r.read_string()); });
        return true;
      case 4:
        m.codec = i32_field(r, h, "ColumnMetaData.codec");
        return true;
      case 5:
        m.num_values = i64_field(r, h, "ColumnMetaData.num_values");
        return true;
      case 6:
        m.total_uncompressed_size = i64_field(r, h, "ColumnMetaData.total_uncompressed_size");
        return true;
      case 7:
        m.total_compressed_size = i64_field(r, h, "ColumnMetaData.total_compressed_size");
        return true;
      case 9:
        m.data_page_offset = i64_field(r, h, "ColumnMetaData.data_page_offset");
        return true;
      case 11:
        m.dictionary_page_offset = i64_field(r, h, "ColumnMetaData.dictionary_page_offset");
        return true;
      default:
        return false;
    }
  });
  if (m.type < 0 || m.codec < 0 || m.num_values < 0 || m.total_compressed_size < 0 || m.data_page_offset < 0)
    r.error(
        "ColumnMetaData lacks a required field (type, codec, num_values, total_compressed_size or "
        "data_page_offset)");
  return m;
}

ColumnChunk read_column_chunk(CompactReader& r) {
  ColumnChunk c;
  read_struct(r, [&](const FieldHeader& h) {
    switch (h.id) {
      case 1:
        c.file_path = string_field(r, h, "ColumnChunk.file_path");
        return true;
      case 3:
        expect_type(r, h, TType::Struct, "ColumnChunk.meta_data");
        c.meta = read_column_metadata(r);
        c.has_meta_data = true;
        return true;
      default:
        return false;
    }
  });
  return c;
}

RowGroup read_row_group(CompactReader& r) {
  RowGroup g;
  read_struct(r, [&](const FieldHeader& h) {
    switch (h.id) {
      case 1:
        read_list(r, h, TType::Struct, "RowGroup.columns",
                  [&] { g.columns.push_back(read_column_chunk(r)); });
        return true;
      case 3:
        g.num_rows = i64_field(r, h, "RowGroup.num_rows");
        return true;
      default:
        return false;
    }
  });
  if (g.num_rows < 0) r.error("RowGroup without a valid num_rows");
  return g;
}

}  // namespace

FileMetaData parse_file_metadata(const uint8_t* begin, const uint8_t* end, const std::string& what) {
  CompactReader r(begin, end, what + ": footer FileMetaData");
  FileMetaData md;
  bool has_schema = false;
  read_struct(r, [&](const FieldHeader& h) {
    switch (h.id) {
      case 1:
        md.version = i32_field(r, h, "FileMetaData.version");
        return true;
      case 2:
        read_list(r, h, TType::Struct, "FileMetaData.schema",
                  [&] { md.schema.push_back(read_schema_element(r)); });
        has_schema = true;
        return true;
      case 3:
        md.num_rows = i64_field(r, h, "FileMetaData.num_rows");
        return true;
      case 4:
        read_list(r, h, TType::Struct, "FileMetaData.row_groups",
                  [&] { md.row_groups.push_back(read_row_group(r)); });
        return true;
      case 5:
        read_list(r, h, TType::Struct, "FileMetaData.key_value_metadata", [&] {
          std::pair<std::string, std::string> kv;
          read_struct(r, [&](const FieldHeader& f) {
            if (f.id == 1)
              kv.first = string_field(r, f, "KeyValue.key");
            else if (f.id == 2)
              kv.second = string_field(r, f, "KeyValue.value");
            else
              return false;
            return true;
          });
          md.key_value.push_back(std::move(kv));
        });
        return true;
      case 6:
        md.created_by = string_field(r, h, "FileMetaData.created_by");
        return true;
      default:
        return false;
    }
  });
  if (!has_schema || md.schema.empty()) r.error("FileMetaData has no schema");
  if (md.num_rows < 0) r.error("FileMetaData has no valid num_rows");
  return md;
}

PageHeader parse_page_header(const uint8_t* begin, const uint8_t* end, const std::string& what,
                             size_t* header_size) {
  CompactReader r(begin, end, what + ": PageHeader");
  PageHeader p;
  read_struct(r, [&](const FieldHeader& h) {
    switch (h.id) {
      case 1:
        p.type = i32_field(r, h, "PageHeader.type");
        return true;
      case 2:
        p.uncompressed_page_size = i32_field(r, h, "PageHeader.uncompressed_page_size");
        return true;
      case 3:
        p.compressed_page_size = i32_field(r, h, "PageHeader.compressed_page_size");
        return true;
      case 5:
        expect_type(r, h, TType::Struct, "PageHeader.data_page_header");
        p.has_v1 = true;
        read_struct(r, [&](const FieldHeader& f) {
          if (f.id == 1)
            p.v1.num_values = i32_field(r, f, "DataPageHeader.num_values");
          else if (f.id == 2)
            p.v1.encoding = i32_field(r, f, "DataPageHeader.encoding");
          else if (f.id == 3)
            p.v1.def_encoding = i32_field(r, f, "DataPageHeader.definition_level_encoding");
          else if (f.id == 4)
            p.v1.rep_encoding = i32_field(r, f, "DataPageHeader.repetition_level_encoding");
          else
            return false;
          return true;
        });
        return true;
      case 7:
        expect_type(r, h, TType::Struct, "PageHeader.dictionary_page_header");
        p.has_dict = true;
        read_struct(r, [&](const FieldHeader& f) {
          if (f.id == 1)
            p.dict.num_values = i32_field(r, f, "DictionaryPageHeader.num_values");
          else if (f.id == 2)
            p.dict.encoding = i32_field(r, f, "DictionaryPageHeader.encoding");
          else
            return false;
          return true;
        });
        return true;
      case 8:
        expect_type(r, h, TType::Struct, "PageHeader.data_page_header_v2");
        p.has_v2 = true;
        read_struct(r, [&](const FieldHeader& f) {
          switch (f.id) {
            case 1:
              p.v2.num_values = i32_field(r, f, "DataPageHeaderV2.num_values");
              return true;
            case 2:
              p.v2.num_nulls = i32_field(r, f, "DataPageHeaderV2.num_nulls");
              return true;
            case 3:
              p.v2.num_rows = i32_field(r, f, "DataPageHeaderV2.num_rows");
              return true;
            case 4:
              p.v2.encoding = i32_field(r, f, "DataPageHeaderV2.encoding");
              return true;
            case 5:
              p.v2.def_levels_byte_length = i32_field(r, f, "DataPageHeaderV2.definition_levels_byte_length");
              return true;
            case 6:
              p.v2.rep_levels_byte_length = i32_field(r, f, "DataPageHeaderV2.repetition_levels_byte_length");
              return true;
            case 7:
              expect_type(r, f, TType::True, "DataPageHeaderV2.is_compressed");
              p.v2.is_compressed = r.read_bool(f);
              return true;
            default:
              return false;
          }
        });
        return true;
      default:
        return false;
    }
  });
  if (p.type < 0 || p.uncompressed_page_size < 0 || p.compressed_page_size < 0)
    r.error("PageHeader lacks a valid type, uncompressed_page_size or compressed_page_size");
  *header_size = r.consumed();
  return p;
}

}  // namespace ct::parquet

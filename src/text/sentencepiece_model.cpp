#include "text/sentencepiece_model.h"

#include <cstring>

#include "core/error.h"

namespace ct::text {
namespace {

// Protobuf wire format over a byte range; every read is bounds-checked and a malformed message throws.
class Reader {
 public:
  Reader(const char* p, size_t n, const std::string& path) : p_(p), end_(p + n), path_(path) {}
  bool done() const { return p_ >= end_; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      CT_CHECK(p_ < end_, path_, ": not a SentencePiece model (truncated varint)");
      const auto b = static_cast<unsigned char>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    fail(path_, ": not a SentencePiece model (varint longer than 10 bytes)");
  }
  std::string bytes() {
    const uint64_t n = varint();
    CT_CHECK(n <= static_cast<uint64_t>(end_ - p_), path_, ": not a SentencePiece model (field of ", n,
             " bytes past the end)");
    std::string s(p_, static_cast<size_t>(n));
    p_ += n;
    return s;
  }
  float fixed32_float() {
    CT_CHECK(end_ - p_ >= 4, path_, ": not a SentencePiece model (truncated float)");
    uint32_t u = 0;
    for (int k = 0; k < 4; ++k) u |= static_cast<uint32_t>(static_cast<unsigned char>(p_[k])) << (8 * k);
    p_ += 4;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  void skip(int wire) {
    switch (wire) {
      case 0:
        varint();
        break;
      case 1:
        CT_CHECK(end_ - p_ >= 8, path_, ": not a SentencePiece model (truncated field)");
        p_ += 8;
        break;
      case 2:
        bytes();
        break;
      case 5:
        CT_CHECK(end_ - p_ >= 4, path_, ": not a SentencePiece model (truncated field)");
        p_ += 4;
        break;
      default:
        fail(path_, ": not a SentencePiece model (wire type ", wire, ")");
    }
  }

 private:
  const char* p_;
  const char* end_;
  const std::string& path_;
};

}  // namespace

SentencePieceModel read_sentencepiece_model(const std::string& data, const std::string& path) {
  SentencePieceModel m;
  Reader r(data.data(), data.size(), path);
  while (!r.done()) {
    const uint64_t key = r.varint();
    const auto field = static_cast<int>(key >> 3);
    const int wire = static_cast<int>(key & 7);
    if (field == 1 && wire == 2) {
      const std::string msg = r.bytes();
      Reader pr(msg.data(), msg.size(), path);
      SentencePieceModel::Piece piece;
      while (!pr.done()) {
        const uint64_t k = pr.varint();
        const auto f = static_cast<int>(k >> 3);
        const int w = static_cast<int>(k & 7);
        if (f == 1 && w == 2) {
          piece.piece = pr.bytes();
        } else if (f == 2 && w == 5) {
          piece.score = pr.fixed32_float();
        } else if (f == 3 && w == 0) {
          piece.type = static_cast<int>(pr.varint());
        } else {
          pr.skip(w);
        }
      }
      m.pieces.push_back(std::move(piece));
    } else if (field == 2 && wire == 2) {
      const std::string msg = r.bytes();
      Reader tr(msg.data(), msg.size(), path);
      while (!tr.done()) {
        const uint64_t k = tr.varint();
        const auto f = static_cast<int>(k >> 3);
        const int w = static_cast<int>(k & 7);
        if (f == 3 && w == 0) {
          m.model_type = static_cast<int>(tr.varint());
        } else if (f == 35 && w == 0) {
          m.byte_fallback = tr.varint() != 0;
        } else if (f == 40 && w == 0) {
          m.unk_id = static_cast<int32_t>(tr.varint());
        } else if (f == 45 && w == 2) {
          m.unk_piece = tr.bytes();
        } else {
          tr.skip(w);
        }
      }
    } else if (field == 3 && wire == 2) {
      const std::string msg = r.bytes();
      Reader nr(msg.data(), msg.size(), path);
      while (!nr.done()) {
        const uint64_t k = nr.varint();
        const auto f = static_cast<int>(k >> 3);
        const int w = static_cast<int>(k & 7);
        if (f == 2 && w == 2) {
          m.precompiled_charsmap = nr.bytes();
        } else if (f == 3 && w == 0) {
          m.add_dummy_prefix = nr.varint() != 0;
        } else {
          nr.skip(w);
        }
      }
    } else {
      r.skip(wire);
    }
  }
  CT_CHECK(!m.pieces.empty(), path, ": not a SentencePiece model (no pieces)");
  CT_CHECK(m.unk_id >= 0 && static_cast<size_t>(m.unk_id) < m.pieces.size(), path, ": unk_id ", m.unk_id,
           " is outside the ", m.pieces.size(), " pieces");
  return m;
}

}  // namespace ct::text

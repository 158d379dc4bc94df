// A SentencePiece .model file (the ModelProto protobuf), read by hand: only what transformers' converters
// use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ct::text {

struct SentencePieceModel {
  struct Piece {
    std::string piece;
    float score = 0;
    int type = 1;  // NORMAL=1, UNKNOWN=2, CONTROL=3, USER_DEFINED=4, UNUSED=5, BYTE=6
  };
  std::vector<Piece> pieces;
  int model_type = 1;  // UNIGRAM=1, BPE=2, WORD=3, CHAR=4
  int32_t unk_id = 0;
  bool byte_fallback = false;
  std::string unk_piece = "<unk>";
  std::string precompiled_charsmap;
  bool add_dummy_prefix = true;
};

// Throws ct::Error naming `path` when the bytes are not a ModelProto.
SentencePieceModel read_sentencepiece_model(const std::string& bytes, const std::string& path);

}  // namespace ct::text

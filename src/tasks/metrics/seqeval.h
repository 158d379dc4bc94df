// Entity-level scores of NER predictions as HF `evaluate`'s "seqeval" metric computes them with its defaults
// (seqeval 1.2's classification_report, default mode, IOB prefixes, no suffix): chunks found by the conlleval
// rules (an I- without a B- starts a chunk, a change of type ends one, each sentence ends with an implicit
// O), micro precision/recall/F1 over chunks that match in type, start and end, per-type scores, and token
// accuracy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ct::tasks {

using TagSequences = std::vector<std::vector<std::string>>;  // one tag per token, one list per sentence

// A chunk: its type ("PER", or "_" for a bare B/I tag) and its first and last token in the flattened sequence
// (sentences end to end, each followed by one implicit "O").
struct Chunk {
  std::string type;
  int64_t first = 0, last = 0;
  bool operator<(const Chunk& o) const;
  bool operator==(const Chunk& o) const = default;
};

// seqeval.metrics.sequence_labeling.get_entities over the sentences, in order.
std::vector<Chunk> chunks_of(const TagSequences& tags);

struct EntityScore {
  double precision = 0, recall = 0, f1 = 0;
  int64_t number = 0;  // chunks of this type in the references ("support")
};

struct SeqevalScores {
  std::map<std::string, EntityScore> per_type;  // every type seen in references or predictions, sorted
  double overall_precision = 0, overall_recall = 0, overall_f1 = 0, overall_accuracy = 0;
};

// Fails naming the sentence when the two sides differ in shape, or a tag is empty.
SeqevalScores seqeval(const TagSequences& predictions, const TagSequences& references);

}  // namespace ct::tasks

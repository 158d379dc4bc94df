// Demo data: answers are exact spans at their answer_start (code points), splits share no paragraph, the same
// seed gives the same data, questions need their wording, the vocab covers every word, and the written JSON
// reads back through the SQuAD reader unchanged.
#include "tasks/question_answering/squad_demo_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "../../data/test_util.h"
#include "core/fs.h"
#include "text/tokenizer.h"

namespace ct::tasks {
namespace {

bool alnum_at(const std::string& s, size_t i) {
  return i < s.size() && std::isalnum(static_cast<unsigned char>(s[i]));
}

int whole_word_count(const std::string& s, const std::string& w) {
  int n = 0;
  for (size_t p = s.find(w); p != std::string::npos; p = s.find(w, p + 1)) {
    if ((p == 0 || !alnum_at(s, p - 1)) && !alnum_at(s, p + w.size())) ++n;
  }
  return n;
}

DemoOptions small(uint64_t seed) {
  DemoOptions o;
  o.seed = seed;
  o.train_paragraphs = 150;
  o.eval_paragraphs = 30;
  return o;
}

TEST(DemoData, AnswersAreExactSpans) {
  DemoData d = generate_demo_data(small(1));
  EXPECT_EQ(d.train.size(), 150u * 4u);
  EXPECT_EQ(d.eval.size(), 30u * 4u);
  for (const auto* split : {&d.train, &d.eval}) {
    for (const Example& e : *split) {
      ASSERT_EQ(e.answers.size(), 1u);
      const Answer& a = e.answers[0];
      EXPECT_EQ(e.context.substr(static_cast<size_t>(a.begin), a.text.size()), a.text) << e.id;
      EXPECT_EQ(a.end - a.begin, static_cast<int64_t>(a.text.size()));
      // answer_start counts code points: the bytes before it decode to exactly start_char characters.
      auto cp = utf8_codepoint_offsets(e.context, e.id);
      EXPECT_EQ(cp[static_cast<size_t>(a.start_char)], a.begin) << e.id;
      // Every answer text occurs once in its paragraph as a whole word, so a text match cannot pick a
      // distractor.
      EXPECT_EQ(whole_word_count(e.context, a.text), 1) << e.id << ": " << a.text;
      EXPECT_EQ(e.question.back(), '?');
    }
  }
}

TEST(DemoData, SplitsAreDisjointAndIdsUnique) {
  DemoData d = generate_demo_data(small(2));
  std::set<std::string> train_ctx, ids;
  for (const Example& e : d.train) {
    train_ctx.insert(e.context);
    EXPECT_TRUE(ids.insert(e.id).second) << e.id;
  }
  for (const Example& e : d.eval) {
    EXPECT_EQ(train_ctx.count(e.context), 0u) << e.id;
    EXPECT_TRUE(ids.insert(e.id).second) << e.id;
  }
  EXPECT_EQ(train_ctx.size(), 150u);
}

TEST(DemoData, DeterministicBySeed) {
  const std::string a = squad_json(generate_demo_data(small(3)).train);
  EXPECT_EQ(a, squad_json(generate_demo_data(small(3)).train));
  EXPECT_NE(a, squad_json(generate_demo_data(small(4)).train));
}

TEST(DemoData, VariedAndNotAnswerableByPositionOrType) {
  DemoData d = generate_demo_data(small(5));
  std::set<std::string> question_forms;
  std::map<int64_t, int64_t> start_positions;
  int64_t same_type_distractor = 0;
  for (const Example& e : d.train) {
    start_positions[e.answers[0].start_char]++;
    // The question's template: its words without the capitalized ones after the first (the person's name).
    std::string form;
    size_t k = 0;
    for (size_t p = 0; p <= e.question.size(); ++k) {
      size_t q = e.question.find(' ', p);
      if (q == std::string::npos) q = e.question.size();
      const std::string word = e.question.substr(p, q - p);
      if (k == 0 || !std::isupper(static_cast<unsigned char>(word[0]))) form += word + " ";
      p = q + 1;
    }
    question_forms.insert(form);
    // Another answer of the same paragraph with the same shape (both numbers, or both words) is a distractor.
    const bool numeric = std::isdigit(static_cast<unsigned char>(e.answers[0].text[0]));
    for (const Example& o : d.train) {
      if (&o == &e || o.context != e.context) continue;
      if (std::isdigit(static_cast<unsigned char>(o.answers[0].text[0])) == numeric &&
          o.answers[0].text != e.answers[0].text) {
        ++same_type_distractor;
        break;
      }
    }
  }
  EXPECT_GE(question_forms.size(), 38u) << "40 templates";
  // No single answer position dominates.
  int64_t most = 0;
  for (auto& [pos, n] : start_positions) most = std::max(most, n);
  EXPECT_LT(most * 20, static_cast<int64_t>(d.train.size()));
  EXPECT_GT(same_type_distractor * 2, static_cast<int64_t>(d.train.size()));
  // Contexts hold several people: names repeat across sentences of one paragraph.
  int64_t multi_person = 0;
  for (const Example& e : d.train) multi_person += std::count(e.context.begin(), e.context.end(), '.') >= 4;
  EXPECT_GT(multi_person * 10, static_cast<int64_t>(d.train.size()) * 9);
}

TEST(DemoData, VocabCoversEveryWordLowerCasedAndAccentStripped) {
  DemoData d = generate_demo_data(small(6));
  std::vector<Example> all = d.train;
  all.insert(all.end(), d.eval.begin(), d.eval.end());
  auto vocab = build_demo_vocab(all);
  ASSERT_GE(vocab.size(), 5u);
  EXPECT_EQ(vocab[0], "[PAD]");
  EXPECT_EQ(vocab[1], "[UNK]");
  EXPECT_EQ(vocab[2], "[CLS]");
  EXPECT_EQ(vocab[3], "[SEP]");
  EXPECT_EQ(vocab[4], "[MASK]");
  std::set<std::string> v(vocab.begin(), vocab.end());
  EXPECT_EQ(v.size(), vocab.size());
  for (const char* w : {"was", "born", "?", ".", "'", "s", "new", "york", "jose", "zoe", "muller", "sao",
                        "paulo", "bogota", "zurich"}) {
    EXPECT_EQ(v.count(w), 1u) << w;
  }
  for (const auto& w : vocab) {
    if (w[0] == '[') continue;
    for (char c : w) EXPECT_FALSE(c >= 'A' && c <= 'Z') << w;
  }
  // The real tokenizer on this vocab never produces [UNK] for demo text, and every word is one token.
  const auto tok = text::Tokenizer::from_vocab(vocab);
  for (const Example& e : all) {
    for (const auto& t : tok.encode(e.context)) EXPECT_NE(t.id, tok.unk_id()) << e.context;
    for (const auto& t : tok.encode(e.question)) EXPECT_NE(t.id, tok.unk_id()) << e.question;
  }
}

TEST(DemoData, WrittenJsonReadsBack) {
  data::testing::TempDir dir;
  DemoData d = generate_demo_data(small(7));
  const std::string path = dir.path() + "/train.json";
  write_squad_json(d.train, path);
  SquadReadStats stats;
  auto back = read_squad(path, &stats);
  EXPECT_EQ(stats.skipped, 0);
  ASSERT_EQ(back.size(), d.train.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].id, d.train[i].id);
    EXPECT_EQ(back[i].context, d.train[i].context);
    EXPECT_EQ(back[i].question, d.train[i].question);
    EXPECT_EQ(back[i].title, d.train[i].title);
    EXPECT_EQ(back[i].answers[0].begin, d.train[i].answers[0].begin);
    EXPECT_EQ(back[i].answers[0].start_char, d.train[i].answers[0].start_char);
  }
  auto j = nlohmann::json::parse(fs::read_file(path));
  EXPECT_EQ(j["version"], "1.1");
  EXPECT_EQ(j["data"].size(), 15u);  // 10 paragraphs per article
  EXPECT_EQ(j["data"][0]["paragraphs"].size(), 10u);
}

int occurrences(const std::string& s, const std::string& w) {
  int n = 0;
  for (size_t p = s.find(w); p != std::string::npos; p = s.find(w, p + 1)) ++n;
  return n;
}

TEST(DemoData, RelationsRepeatOnlyWhenAsked) {
  // Every "cats" / "books" sentence is one relation: at most one per paragraph unless repeat_relations is
  // set.
  DemoOptions o = small(8);
  int most = 0;
  for (const Example& e : generate_demo_data(o).train) {
    most = std::max({most, occurrences(e.context, " cats"), occurrences(e.context, " books")});
  }
  EXPECT_EQ(most, 1);
  o.repeat_relations = true;
  o.max_facts = 10;
  most = 0;
  for (const Example& e : generate_demo_data(o).train) {
    most = std::max({most, occurrences(e.context, " cats"), occurrences(e.context, " books")});
  }
  EXPECT_GE(most, 2);
}

// Kind of an answer by its text: year, count, color, or another word kind.
std::string kind_of(const std::string& t) {
  static const std::set<std::string> kColors = {"red",    "blue",  "green", "yellow", "purple",
                                                "orange", "black", "white", "silver", "pink",
                                                "brown",  "gray",  "gold",  "teal",   "violet"};
  if (std::isdigit(static_cast<unsigned char>(t[0]))) return t.size() == 4 ? "year" : "count";
  return kColors.count(t) ? "color" : "other";
}

// Fraction of year/count/color questions whose paragraph holds another answer of the same kind (with 2 people
// x 2 facts and 4 questions per paragraph, every fact is asked, so the questions list all answers).
double same_kind_rate(const std::vector<Example>& ex) {
  int64_t n = 0, hit = 0;
  for (const Example& e : ex) {
    const std::string k = kind_of(e.answers[0].text);
    if (k == "other") continue;
    ++n;
    for (const Example& o : ex) {
      if (&o != &e && o.context == e.context && kind_of(o.answers[0].text) == k) {
        ++hit;
        break;
      }
    }
  }
  return static_cast<double>(hit) / static_cast<double>(n);
}

TEST(DemoData, PairedRelationsGiveSameKindDistractors) {
  DemoOptions o = small(9);
  const double plain = same_kind_rate(generate_demo_data(o).train);
  o.paired_relations = true;
  DemoData d = generate_demo_data(o);
  const double paired = same_kind_rate(d.train);
  EXPECT_GT(paired, 0.8);
  EXPECT_LT(plain, 0.5);
  for (const Example& e : d.train) {
    EXPECT_EQ(e.context.substr(static_cast<size_t>(e.answers[0].begin), e.answers[0].text.size()),
              e.answers[0].text);
  }
  EXPECT_EQ(d.train.size(), 600u);
}

TEST(DemoData, BadOptions) {
  DemoOptions o;
  o.train_paragraphs = 0;
  data::testing::expect_error([&] { generate_demo_data(o); }, {"train_paragraphs"});
  o = DemoOptions{};
  o.min_people = 3;
  o.max_people = 2;
  data::testing::expect_error([&] { generate_demo_data(o); }, {"min_people"});
  o = DemoOptions{};
  o.max_facts = 11;
  data::testing::expect_error([&] { generate_demo_data(o); }, {"max_facts <= 10"});
  o = DemoOptions{};
  o.questions_per_paragraph = 0;
  data::testing::expect_error([&] { generate_demo_data(o); }, {"questions_per_paragraph"});
  o = DemoOptions{};
  o.max_people = 3;
  o.max_facts = 4;
  data::testing::expect_error([&] { generate_demo_data(o); },
                              {"max_people * max_facts must be <= 10", "3 * 4"});
  o.repeat_relations = true;
  o.train_paragraphs = 10;
  o.eval_paragraphs = 2;
  EXPECT_NO_THROW(generate_demo_data(o));
}

}  // namespace
}  // namespace ct::tasks

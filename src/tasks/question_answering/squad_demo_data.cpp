#include "tasks/question_answering/squad_demo_data.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/rng.h"
#include "data/unicode_util.h"
#include "tasks/word_vocab.h"

namespace ct::tasks {
namespace {

enum class Kind { city, year, job, org, color, count };

// {P} = the person, {X} = the answer, {A} = "a"/"an" for the answer that follows.
struct Relation {
  Kind kind;
  std::vector<const char*> statements;
  std::vector<const char*> questions;
};

const std::vector<Relation>& relations() {
  static const std::vector<Relation> kRelations = {
      {Kind::city,
       {"{P} was born in {X}.", "{P} is a native of {X}.", "The birthplace of {P} is {X}.",
        "{X} is the city where {P} was born."},
       {"Where was {P} born?", "In which city was {P} born?", "What is the birthplace of {P}?",
        "Which city is {P} a native of?"}},
      {Kind::city,
       {"{P} lives in {X}.", "{P} currently resides in {X}.", "These days {P} makes a home in {X}.",
        "{X} is where {P} lives now."},
       {"Where does {P} live?", "In which city does {P} live now?", "Which city does {P} reside in?",
        "Where is the home of {P}?"}},
      {Kind::year,
       {"{P} was born in {X}.", "{P} was born in the year {X}.", "The year of birth of {P} is {X}.",
        "In {X}, {P} was born."},
       {"In what year was {P} born?", "When was {P} born?", "What is the year of birth of {P}?",
        "What year was {P} born in?"}},
      {Kind::year,
       {"{P} started working in {X}.", "{P} began a career in {X}.", "In {X}, {P} took a first job.",
        "The career of {P} began in {X}."},
       {"When did {P} start working?", "In what year did {P} begin a career?",
        "What year did the career of {P} begin?", "When did {P} take a first job?"}},
      {Kind::job,
       {"{P} works as {A} {X}.", "{P} is {A} {X} by trade.", "By profession, {P} is {A} {X}.",
        "The job of {P} is that of {A} {X}."},
       {"What is the profession of {P}?", "What does {P} do for a living?", "What job does {P} have?",
        "What does {P} work as?"}},
      {Kind::org,
       {"{P} is employed by {X}.", "{P} works for {X}.", "{X} employs {P}.", "The employer of {P} is {X}."},
       {"Which organization does {P} work for?", "Who employs {P}?", "What company is {P} employed by?",
        "Who is the employer of {P}?"}},
      {Kind::color,
       {"The favorite color of {P} is {X}.", "{P} likes the color {X} best.", "{P}'s favorite color is {X}.",
        "Of all colors, {P} prefers {X}."},
       {"What is the favorite color of {P}?", "Which color does {P} like best?",
        "What is {P}'s favorite color?", "What color does {P} prefer?"}},
      {Kind::color,
       {"{P} drives {A} {X} car.", "The car of {P} is painted {X}.", "{P} owns {A} {X} car.",
        "The car that {P} drives is {X}."},
       {"What color is the car of {P}?", "What color car does {P} drive?", "What color is the car {P} owns?",
        "How is the car of {P} painted?"}},
      {Kind::count,
       {"{P} has {X} cats.", "{P} owns {X} cats.", "{P} keeps {X} cats at home.",
        "At home, {P} takes care of {X} cats."},
       {"How many cats does {P} have?", "How many cats does {P} own?", "How many cats live with {P}?",
        "What is the number of cats {P} keeps?"}},
      {Kind::count,
       {"{P} has written {X} books.", "{P} is the author of {X} books.",
        "So far, {P} has published {X} books.", "The number of books by {P} is {X}."},
       {"How many books has {P} written?", "How many books did {P} write?",
        "How many books has {P} published?", "What is the number of books by {P}?"}},
  };
  return kRelations;
}

const std::vector<std::string> kFirst = {
    "Alice", "Bob",   "Carol",   "David",  "Emma",   "Frank",  "Grace", "Henry", "Irene",  "Jack",
    "Karen", "Liam",  "Maria",   "Noah",   "Olivia", "Peter",  "Quinn", "Rosa",  "Samuel", "Tara",
    "Umar",  "Vera",  "William", "Xenia",  "Yusuf",  "Zoë",    "José",  "Renée", "Ahmed",  "Mei",
    "Hiro",  "Priya", "Lars",    "Ingrid", "Pablo",  "Fatima", "Chen",  "Aisha", "Omar",   "Nina"};
const std::vector<std::string> kLast = {
    "Smith",  "Johnson",  "Garcia", "Miller", "Davis",    "Wilson",   "Taylor",   "Anderson",
    "Thomas", "Moore",    "Martin", "Lee",    "Clark",    "Lewis",    "Walker",   "Young",
    "Wright", "Scott",    "Adams",  "Nelson", "Hill",     "Campbell", "Mitchell", "Roberts",
    "Carter", "Phillips", "Müller", "Núñez",  "Kowalski", "Tanaka",   "Kim",      "Singh",
    "Novak",  "Rossi",    "Dubois", "Jensen", "Okafor",   "Haddad",   "Ivanova",  "Larsen"};
const std::vector<std::string> kCities = {
    "Paris",     "London",         "Berlin",   "Madrid",    "Rome",      "Vienna",       "Prague",
    "Lisbon",    "Dublin",         "Oslo",     "Helsinki",  "Warsaw",    "Athens",       "Cairo",
    "Nairobi",   "Lagos",          "Tokyo",    "Osaka",     "Seoul",     "Mumbai",       "Sydney",
    "Toronto",   "Chicago",        "Boston",   "Denver",    "Seattle",   "Lima",         "Bogotá",
    "Havana",    "Zürich",         "New York", "San Diego", "Cape Town", "Buenos Aires", "Hong Kong",
    "São Paulo", "Rio de Janeiro", "Kyoto",    "Manila",    "Hanoi"};
const std::vector<std::string> kJobs = {
    "teacher",    "doctor",         "nurse",          "lawyer",       "engineer",
    "architect",  "pilot",          "chef",           "farmer",       "painter",
    "musician",   "journalist",     "dentist",        "pharmacist",   "electrician",
    "plumber",    "carpenter",      "librarian",      "accountant",   "software developer",
    "bus driver", "police officer", "data scientist", "photographer", "surgeon",
    "economist",  "veterinarian",   "translator",     "astronaut",    "optician"};
const std::vector<std::string> kOrgs = {"Acme Corporation",
                                        "Globex",
                                        "Initech",
                                        "Northwind Traders",
                                        "Stark Industries",
                                        "Wayne Enterprises",
                                        "Umbrella Labs",
                                        "Blue Harbor Bank",
                                        "Red Rock Mining",
                                        "Silver Lake Hospital",
                                        "Green Valley School",
                                        "Oceanic Airlines",
                                        "Pioneer Motors",
                                        "Summit Energy",
                                        "Crescent Media",
                                        "Atlas Logistics",
                                        "Maple Leaf Foods",
                                        "Golden Gate Insurance",
                                        "Orion Software",
                                        "Polaris Research"};
const std::vector<std::string> kColors = {"red",    "blue",  "green", "yellow", "purple",
                                          "orange", "black", "white", "silver", "pink",
                                          "brown",  "gray",  "gold",  "teal",   "violet"};

struct Fact {
  size_t person;
  size_t relation;
  std::string value;
};

struct Rng {
  Generator g;
  int64_t below(int64_t n) { return static_cast<int64_t>(g.below(static_cast<uint64_t>(n))); }
  int64_t between(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i)
      std::swap(v[i - 1], v[static_cast<size_t>(below(static_cast<int64_t>(i)))]);
  }
  // k distinct items of `pool`.
  std::vector<std::string> pick(const std::vector<std::string>& pool, size_t k) {
    std::vector<std::string> p = pool;
    shuffle(p);
    p.resize(std::min(k, p.size()));
    return p;
  }
};

std::string article_for(const std::string& word) {
  const char c = word.empty() ? 'x' : word[0];
  return std::string("aeiou").find(c) != std::string::npos ? "an" : "a";
}

// Fills a template; returns the text and (through *answer_at) the byte offset of {X} when present.
std::string fill(const char* tmpl, const std::string& person, const std::string& value, int64_t* answer_at) {
  std::string out;
  for (const char* p = tmpl; *p;) {
    if (p[0] == '{' && p[1] && p[2] == '}') {
      if (p[1] == 'P') out += person;
      if (p[1] == 'A') out += article_for(value);
      if (p[1] == 'X') {
        if (answer_at) *answer_at = static_cast<int64_t>(out.size());
        out += value;
      }
      p += 3;
    } else {
      out += *p++;
    }
  }
  return out;
}

int64_t codepoints_before(const std::string& s, int64_t byte) {
  int64_t n = 0;
  for (int64_t i = 0; i < byte; ++i)
    n += (static_cast<unsigned char>(s[static_cast<size_t>(i)]) & 0xC0) != 0x80;
  return n;
}

// One paragraph and its questions.
std::vector<Example> make_paragraph(Rng& rng, const DemoOptions& o, const std::string& id_prefix,
                                    const std::string& title) {
  const size_t people = static_cast<size_t>(rng.between(o.min_people, o.max_people));
  const auto first = rng.pick(kFirst, people), last = rng.pick(kLast, people);
  std::vector<std::string> names;
  for (size_t i = 0; i < people; ++i) names.push_back(first[i] + " " + last[i]);

  // Values are distinct per kind within a paragraph, so every answer text occurs once.
  std::vector<std::string> years, counts;
  for (int y = 1920; y <= 2005; ++y) years.push_back(std::to_string(y));
  for (int c = 2; c <= 30; ++c) counts.push_back(std::to_string(c));
  const size_t most = people * static_cast<size_t>(o.max_facts);
  std::vector<std::vector<std::string>> pools = {rng.pick(kCities, most), rng.pick(years, most),
                                                 rng.pick(kJobs, most),   rng.pick(kOrgs, most),
                                                 rng.pick(kColors, most), rng.pick(counts, most)};
  std::vector<size_t> used(pools.size(), 0);

  std::vector<Fact> facts;
  std::vector<size_t> count(people);
  size_t total = 0;
  for (size_t p = 0; p < people; ++p) {
    count[p] = static_cast<size_t>(rng.between(o.min_facts, o.max_facts));
    total += count[p];
  }
  // Paired mode: relations come in same-kind pairs (birth and home city, ...) so most answers have a
  // distractor of their own type elsewhere in the paragraph; the pair's two facts go to the same or different
  // people.
  std::vector<size_t> paired;
  if (o.paired_relations && !o.repeat_relations) {
    std::vector<bool> in(relations().size(), false);
    while (paired.size() < total) {
      std::vector<size_t> pairs, singles;
      for (size_t r = 0; r + 1 < relations().size(); ++r) {
        if (relations()[r].kind == relations()[r + 1].kind && !in[r] && !in[r + 1]) pairs.push_back(r);
      }
      for (size_t r = 0; r < relations().size(); ++r) {
        if (!in[r]) singles.push_back(r);
      }
      const bool pair = total - paired.size() >= 2 && !pairs.empty() && rng.below(3) != 0;
      const size_t r = pair ? pairs[static_cast<size_t>(rng.below(static_cast<int64_t>(pairs.size())))]
                            : singles[static_cast<size_t>(rng.below(static_cast<int64_t>(singles.size())))];
      paired.push_back(r);
      in[r] = true;
      if (pair) {
        paired.push_back(r + 1);
        in[r + 1] = true;
      }
    }
    rng.shuffle(paired);
  }
  std::vector<bool> taken(relations().size(), false);
  size_t next_paired = 0;
  for (size_t p = 0; p < people; ++p) {
    std::vector<size_t> rel;
    if (!paired.empty()) {
      rel.assign(paired.begin() + static_cast<std::ptrdiff_t>(next_paired),
                 paired.begin() + static_cast<std::ptrdiff_t>(next_paired + count[p]));
      next_paired += count[p];
    } else {
      for (size_t r = 0; r < relations().size(); ++r) {
        if (o.repeat_relations || !taken[r]) rel.push_back(r);
      }
      rng.shuffle(rel);
    }
    const size_t k = count[p];
    for (size_t j = 0; j < k && j < rel.size(); ++j) {
      taken[rel[j]] = true;
      // Two facts of one kind (birth and home city, ...) take two different values.
      const size_t kind = static_cast<size_t>(relations()[rel[j]].kind);
      facts.push_back(Fact{p, rel[j], pools[kind][used[kind]++ % pools[kind].size()]});
    }
  }
  rng.shuffle(facts);

  std::string context;
  std::vector<int64_t> answer_byte(facts.size());
  for (size_t f = 0; f < facts.size(); ++f) {
    const Relation& r = relations()[facts[f].relation];
    const char* tmpl =
        r.statements[static_cast<size_t>(rng.below(static_cast<int64_t>(r.statements.size())))];
    if (!context.empty()) context += ' ';
    int64_t at = 0;
    const std::string sentence = fill(tmpl, names[facts[f].person], facts[f].value, &at);
    answer_byte[f] = static_cast<int64_t>(context.size()) + at;
    context += sentence;
  }

  std::vector<size_t> asked(facts.size());
  for (size_t f = 0; f < asked.size(); ++f) asked[f] = f;
  rng.shuffle(asked);
  asked.resize(std::min(asked.size(), static_cast<size_t>(o.questions_per_paragraph)));
  std::vector<Example> out;
  for (size_t q = 0; q < asked.size(); ++q) {
    const Fact& fact = facts[asked[q]];
    const Relation& r = relations()[fact.relation];
    const char* tmpl = r.questions[static_cast<size_t>(rng.below(static_cast<int64_t>(r.questions.size())))];
    Example ex;
    ex.id = str(id_prefix, "-", q);
    ex.title = title;
    ex.context = context;
    ex.question = fill(tmpl, names[fact.person], fact.value, nullptr);
    Answer a;
    a.text = fact.value;
    a.begin = answer_byte[asked[q]];
    a.end = a.begin + static_cast<int64_t>(a.text.size());
    a.start_char = codepoints_before(context, a.begin);
    ex.answers.push_back(a);
    out.push_back(std::move(ex));
  }
  return out;
}

}  // namespace

DemoData generate_demo_data(const DemoOptions& o) {
  CT_CHECK(o.train_paragraphs >= 1, "demo: train_paragraphs must be >= 1, got ", o.train_paragraphs);
  CT_CHECK(o.eval_paragraphs >= 1, "demo: eval_paragraphs must be >= 1, got ", o.eval_paragraphs);
  CT_CHECK(o.min_people >= 1 && o.min_people <= o.max_people && o.max_people <= 10,
           "demo: people per paragraph must satisfy 1 <= min_people <= max_people <= 10, got ", o.min_people,
           "..", o.max_people);
  CT_CHECK(o.min_facts >= 1 && o.min_facts <= o.max_facts &&
               o.max_facts <= static_cast<int64_t>(relations().size()),
           "demo: facts per person must satisfy 1 <= min_facts <= max_facts <= ", relations().size(),
           ", got ", o.min_facts, "..", o.max_facts);
  CT_CHECK(o.repeat_relations || o.max_people * o.max_facts <= static_cast<int64_t>(relations().size()),
           "demo: max_people * max_facts must be <= ", relations().size(),
           " when relations do not repeat within a paragraph, got ", o.max_people, " * ", o.max_facts);
  CT_CHECK(o.questions_per_paragraph >= 1, "demo: questions_per_paragraph must be >= 1, got ",
           o.questions_per_paragraph);
  Rng rng{Generator(o.seed)};
  DemoData d;
  std::set<std::string> contexts;
  constexpr int64_t kParagraphsPerArticle = 10;
  for (int split = 0; split < 2; ++split) {
    const int64_t count = split == 0 ? o.train_paragraphs : o.eval_paragraphs;
    const char* name = split == 0 ? "train" : "dev";
    auto& out = split == 0 ? d.train : d.eval;
    for (int64_t p = 0; p < count; ++p) {
      const std::string title = str("demo-", name, "-", p / kParagraphsPerArticle);
      std::vector<Example> exs;
      // Paragraphs are unique across both splits, so held-out contexts were never seen in training.
      do exs = make_paragraph(rng, o, str("demo-", name, "-", p), title);
      while (!contexts.insert(exs.front().context).second);
      for (auto& e : exs) out.push_back(std::move(e));
    }
  }
  return d;
}

std::vector<std::string> build_demo_vocab(const std::vector<Example>& examples) {
  std::vector<std::string> texts;
  const std::string* last_context = nullptr;
  for (const Example& e : examples) {
    if (!last_context || *last_context != e.context) texts.push_back(e.context);
    last_context = &e.context;
    texts.push_back(e.question);
  }
  return build_word_vocab(texts);
}

std::string squad_json(const std::vector<Example>& examples) {
  using nlohmann::ordered_json;
  const bool v2 =
      std::any_of(examples.begin(), examples.end(), [](const Example& e) { return e.is_impossible; });
  ordered_json data = ordered_json::array();
  for (size_t i = 0; i < examples.size(); ++i) {
    const Example& e = examples[i];
    if (data.empty() || data.back()["title"] != e.title) {
      data.push_back(ordered_json{{"title", e.title}, {"paragraphs", ordered_json::array()}});
    }
    auto& paragraphs = data.back()["paragraphs"];
    if (paragraphs.empty() || paragraphs.back()["context"] != e.context) {
      paragraphs.push_back(ordered_json{{"context", e.context}, {"qas", ordered_json::array()}});
    }
    ordered_json answers = ordered_json::array();
    for (const Answer& a : e.answers)
      answers.push_back(ordered_json{{"text", a.text}, {"answer_start", a.start_char}});
    ordered_json qa = {{"id", e.id}, {"question", e.question}, {"answers", answers}};
    if (v2) qa["is_impossible"] = e.is_impossible;
    paragraphs.back()["qas"].push_back(std::move(qa));
  }
  ordered_json doc = {{"version", v2 ? "v2.0" : "1.1"}, {"data", std::move(data)}};
  return doc.dump() + "\n";
}

void write_squad_json(const std::vector<Example>& examples, const std::string& path) {
  fs::write_file_atomic(path, squad_json(examples));
}

}  // namespace ct::tasks
